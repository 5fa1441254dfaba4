package kafkax

import (
	"encoding/json"
	"time"
)

// Sources of dead letters.
const (
	SourceOutbox = "outbox" // the relay could not parse an outbox stream entry
	SourceWriter = "writer" // the writer could not apply a Kafka message
)

// HeaderReason is the Kafka header carrying a dead letter's reason.
const HeaderReason = "reason"

// DeadLetter is the value of a message on the dead-letter topic: the original payload,
// untouched, and why it could not be handled. Nothing is dropped silently.
type DeadLetter struct {
	Source  string `json:"source"`
	Reason  string `json:"reason"`
	Key     string `json:"key,omitempty"`
	Payload string `json:"payload"`
	// EntryID is the outbox stream entry id (relay) or event id, when known.
	EntryID string `json:"entry_id,omitempty"`
	AtMs    int64  `json:"at_ms"`
}

// Message encodes the dead letter as a Kafka message keyed like the original.
func (d DeadLetter) Message() Message {
	if d.AtMs == 0 {
		d.AtMs = time.Now().UnixMilli()
	}
	v, _ := json.Marshal(d) // only strings and an int: cannot fail
	return Message{Key: []byte(d.Key), Value: v,
		Headers: []HeaderKV{{Key: HeaderReason, Value: []byte(d.Reason)}}}
}

// ParseDeadLetter decodes a dead-letter message value.
func ParseDeadLetter(b []byte) (DeadLetter, error) {
	var d DeadLetter
	err := json.Unmarshal(b, &d)
	return d, err
}
