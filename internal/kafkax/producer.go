// Package kafkax is the project's one Kafka producer, a synchronous wrapper over kafka-go's
// Writer that waits for acks=all and reports per message what Kafka took, with the events'
// HMAC (Sign, Verify); also dead letters and the writer group's progress (docs/DESIGN.md,
// "The relay").
package kafkax

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"hash"
	"sync"
	"time"

	"github.com/segmentio/kafka-go"

	"github.com/seckill/seckill/internal/secrets"
)

// Message is a Kafka message (kafka-go's type: Key, Value, Headers).
type Message = kafka.Message

// HeaderKV is a Kafka message header.
type HeaderKV = kafka.Header

// Sender writes messages and returns only once Kafka acknowledged them (or failed).
// A nil error means every message was acknowledged; otherwise Acked tells which were.
type Sender interface {
	Send(ctx context.Context, msgs ...Message) error
}

// Conf configures a Producer. Build it with go-zero's config loader or conf.FillDefault:
// the defaults live only in the tags.
type Conf struct {
	Brokers []string
	Topic   string
	// BatchTimeout is how long kafka-go waits to fill a partition's batch. A synchronous
	// call cannot add messages while it waits, so this is pure latency. kafka-go has no
	// "linger 0" (0 is its default, 1 s), but it appends all of a call's messages for a
	// partition under one lock before the timer can flush the batch: 1µs sends each call's
	// messages as soon as they are in, one request per partition. At 2 ms the inventory
	// service's produce took 6.5 ms (p50) of a 7 ms ReserveBatch, and make bench's
	// reservations ran at 0.56x the echo; at 1µs, 0.83x (docs/DESIGN.md, "Measuring").
	BatchTimeout time.Duration `json:",default=1us"`
	// BatchSize bounds one partition's batch; a call with more messages makes several.
	BatchSize int `json:",default=500"`
	// WriteTimeout bounds one produce request.
	WriteTimeout time.Duration `json:",default=10s"`
	// Auth is the SASL and TLS the producer connects with.
	Auth Auth `json:",optional"`
}

// Producer is a synchronous, batched, acks=all producer to one topic. Messages with the
// same key go to the same partition (FNV-1a hash, as Sarama), so an order's events stay
// in one partition. Safe for concurrent use.
type Producer struct {
	w *kafka.Writer
}

// NewProducer returns a producer for c.Topic. Nothing is dialled until the first Send.
func NewProducer(c Conf) (*Producer, error) {
	if len(c.Brokers) == 0 {
		return nil, errors.New("kafkax: no brokers")
	}
	if c.Topic == "" {
		return nil, errors.New("kafkax: no topic")
	}
	transport, err := c.Auth.Transport()
	if err != nil {
		return nil, err
	}
	return &Producer{w: &kafka.Writer{
		Addr:         kafka.TCP(c.Brokers...),
		Transport:    transport,
		Topic:        c.Topic,
		Balancer:     &kafka.Hash{},
		RequiredAcks: kafka.RequireAll,
		BatchTimeout: c.BatchTimeout,
		BatchSize:    c.BatchSize,
		WriteTimeout: c.WriteTimeout,
		MaxAttempts:  3,
	}}, nil
}

// Send writes msgs synchronously and returns when Kafka acknowledged all of them (acks=all)
// or some failed; then the error is a kafka.WriteErrors (see Acked) or a whole-call error.
func (p *Producer) Send(ctx context.Context, msgs ...Message) error {
	if len(msgs) == 0 {
		return nil
	}
	return p.w.WriteMessages(ctx, msgs...)
}

// Close flushes and closes the producer.
func (p *Producer) Close() error { return p.w.Close() }

// Acked reports, for the n messages of a Send that returned err, which ones Kafka
// acknowledged. A whole-call error acknowledges none.
func Acked(err error, n int) []bool {
	ok := make([]bool, n)
	if err == nil {
		for i := range ok {
			ok[i] = true
		}
		return ok
	}
	var we kafka.WriteErrors
	if errors.As(err, &we) && len(we) == n {
		for i, e := range we {
			ok[i] = e == nil
		}
	}
	return ok
}

// EnvEventKey is the environment variable the shipped configs read EventKey from.
const EnvEventKey = "SECKILL_EVENT_KEY"

// HeaderMAC is the Kafka header carrying an event's HMAC-SHA256 over its key and value.
const HeaderMAC = "sk-mac"

// ErrForged is Verify's error for a message without a valid HMAC.
var ErrForged = errors.New("kafkax: missing or wrong " + HeaderMAC)

// CheckEventKey says why key cannot sign events (secrets.Check), when set or required (pro mode).
func CheckEventKey(key string, required bool) error {
	if key == "" && !required {
		return nil
	}
	if err := secrets.Check("EventKey", key); err != nil {
		return fmt.Errorf("%w (%s)", err, EnvEventKey)
	}
	return nil
}

// A Signer signs and verifies messages with a key shared by their producers and consumers.
type Signer struct {
	key []byte
	// macs holds HMAC states keyed with key, reused (Reset): hmac.New hashes the key's
	// pads anew for every message, twice the work of a short message's MAC.
	macs sync.Pool
}

// NewSigner returns a signer with key; nil for an empty key (nothing signed or checked).
func NewSigner(key string) *Signer {
	if key == "" {
		return nil
	}
	s := &Signer{key: []byte(key)}
	s.macs.New = func() any { return hmac.New(sha256.New, s.key) }
	return s
}

// mac is the HMAC-SHA256 of key and value, the key's length first so that the split is unambiguous.
func (s *Signer) mac(key, value []byte) []byte {
	h := s.macs.Get().(hash.Hash)
	defer s.macs.Put(h)
	h.Reset()
	var n [8]byte
	binary.BigEndian.PutUint64(n[:], uint64(len(key)))
	h.Write(n[:])
	h.Write(key)
	h.Write(value)
	return h.Sum(nil)
}

// Sign returns m with its HMAC header (a copy of the headers, any earlier HMAC replaced).
func (s *Signer) Sign(m Message) Message {
	hs := make([]HeaderKV, 0, len(m.Headers)+1)
	for _, h := range m.Headers {
		if h.Key != HeaderMAC {
			hs = append(hs, h)
		}
	}
	hs = append(hs, HeaderKV{Key: HeaderMAC, Value: s.mac(m.Key, m.Value)})
	m.Headers = hs
	return m
}

// Verify returns ErrForged unless m carries exactly one HMAC header, and the right one
// (compared in constant time).
func (s *Signer) Verify(m Message) error {
	var got []byte
	n := 0
	for _, h := range m.Headers {
		if h.Key == HeaderMAC {
			got, n = h.Value, n+1
		}
	}
	if n != 1 || !hmac.Equal(got, s.mac(m.Key, m.Value)) {
		return ErrForged
	}
	return nil
}

// Signed returns a Sender that signs every message before sending it through next;
// next itself when s is nil.
func Signed(next Sender, s *Signer) Sender {
	if s == nil {
		return next
	}
	return signed{next: next, s: s}
}

type signed struct {
	next Sender
	s    *Signer
}

func (p signed) Send(ctx context.Context, msgs ...Message) error {
	out := make([]Message, len(msgs))
	for i, m := range msgs {
		out[i] = p.s.Sign(m)
	}
	return p.next.Send(ctx, out...)
}
