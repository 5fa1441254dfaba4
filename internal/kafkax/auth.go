package kafkax

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"os"
	"time"

	"github.com/segmentio/kafka-go"
	"github.com/segmentio/kafka-go/sasl"
	"github.com/segmentio/kafka-go/sasl/scram"
)

// Auth is how a client proves itself to Kafka and checks the brokers: SASL/SCRAM and TLS,
// each off when unset. Every Kafka client of the project is built through it.
type Auth struct {
	// Mechanism is SCRAM-SHA-256 or SCRAM-SHA-512 (with User and Pass); empty: no SASL.
	Mechanism string `json:",optional"`
	User      string `json:",optional"`
	Pass      string `json:",optional"`
	// TLS dials the brokers over TLS, checked against CAFile (the system's roots when empty).
	TLS    bool   `json:",optional"`
	CAFile string `json:",optional"`
}

// sasl is a's SASL mechanism, nil without one.
func (a Auth) sasl() (sasl.Mechanism, error) {
	var algo scram.Algorithm
	switch a.Mechanism {
	case "":
		return nil, nil
	case "SCRAM-SHA-256":
		algo = scram.SHA256
	case "SCRAM-SHA-512":
		algo = scram.SHA512
	default:
		return nil, fmt.Errorf("kafkax: SASL mechanism %q (want SCRAM-SHA-256 or SCRAM-SHA-512)", a.Mechanism)
	}
	if a.User == "" || a.Pass == "" {
		return nil, fmt.Errorf("kafkax: SASL %s needs User and Pass", a.Mechanism)
	}
	return scram.Mechanism(algo, a.User, a.Pass)
}

// tls is a's TLS configuration, nil without TLS.
func (a Auth) tls() (*tls.Config, error) {
	if !a.TLS {
		return nil, nil
	}
	c := &tls.Config{MinVersion: tls.VersionTLS12}
	if a.CAFile != "" {
		pem, err := os.ReadFile(a.CAFile)
		if err != nil {
			return nil, fmt.Errorf("kafkax: CAFile: %w", err)
		}
		c.RootCAs = x509.NewCertPool()
		if !c.RootCAs.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("kafkax: CAFile %s holds no PEM certificate", a.CAFile)
		}
	}
	return c, nil
}

// Dialer is a kafka-go dialer (Readers) authenticating as a says; nil (kafka-go's
// default) when a asks for nothing.
func (a Auth) Dialer() (*kafka.Dialer, error) {
	mech, tc, err := a.parts()
	if err != nil || (mech == nil && tc == nil) {
		return nil, err
	}
	return &kafka.Dialer{Timeout: 10 * time.Second, DualStack: true, SASLMechanism: mech, TLS: tc}, nil
}

// Transport is a kafka-go transport (Writers, Clients) authenticating as a says; nil
// (kafka-go's default) when a asks for nothing.
func (a Auth) Transport() (kafka.RoundTripper, error) {
	mech, tc, err := a.parts()
	if err != nil || (mech == nil && tc == nil) {
		return nil, err
	}
	return &kafka.Transport{SASL: mech, TLS: tc}, nil
}

// parts is a's SASL mechanism and TLS configuration, each nil when a asks for none.
func (a Auth) parts() (sasl.Mechanism, *tls.Config, error) {
	mech, err := a.sasl()
	if err != nil {
		return nil, nil, err
	}
	tc, err := a.tls()
	return mech, tc, err
}
