// Package rpctls configures TLS on the zRPC hop to the inventory service: the certificate
// the service serves, the CA its clients trust (docs/DESIGN.md, "Security").
package rpctls

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"os"

	"github.com/zeromicro/go-zero/zrpc"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
)

// ServerConf is the certificate and key (PEM files) a zRPC server serves; empty: plaintext.
type ServerConf struct {
	CertFile string `json:",optional"`
	KeyFile  string `json:",optional"`
}

// ClientConf is the CA (a PEM file) a zRPC client verifies the server with; empty: plaintext.
type ClientConf struct {
	CAFile string `json:",optional"`
	// ServerName overrides the name checked in the server's certificate (default: the host
	// dialed).
	ServerName string `json:",optional"`
}

// Validate refuses a certificate without its key or a key without its certificate.
func (c ServerConf) Validate() error {
	if (c.CertFile == "") != (c.KeyFile == "") {
		return errors.New("TLS needs both CertFile and KeyFile")
	}
	return nil
}

// Options returns the gRPC server options serving TLS per c (none when c is empty).
func (c ServerConf) Options() ([]grpc.ServerOption, error) {
	if c.CertFile == "" {
		return nil, nil
	}
	creds, err := credentials.NewServerTLSFromFile(c.CertFile, c.KeyFile)
	if err != nil {
		return nil, fmt.Errorf("rpc tls: %w", err)
	}
	return []grpc.ServerOption{grpc.Creds(creds)}, nil
}

// Options returns the zRPC client options dialing with TLS per c (none when c is empty).
func (c ClientConf) Options() ([]zrpc.ClientOption, error) {
	if c.CAFile == "" {
		return nil, nil
	}
	pem, err := os.ReadFile(c.CAFile)
	if err != nil {
		return nil, fmt.Errorf("rpc tls: %w", err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pem) {
		return nil, fmt.Errorf("rpc tls: no certificate in %s", c.CAFile)
	}
	creds := credentials.NewTLS(&tls.Config{RootCAs: pool, ServerName: c.ServerName, MinVersion: tls.VersionTLS12})
	return []zrpc.ClientOption{zrpc.WithTransportCredentials(creds)}, nil
}
