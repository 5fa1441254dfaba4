package kafkax

import (
	"context"
	"errors"
	"fmt"

	"github.com/segmentio/kafka-go"
)

// Progress reads how far a consumer group has got through a topic: the topic's end
// offsets against the group's committed ones. Reconciliation uses it to tell an event
// still on Kafka from a lost one.
type Progress struct {
	client *kafka.Client
	topic  string
	group  string
}

// NewProgress watches group on topic at the given brokers.
func NewProgress(brokers []string, topic, group string) *Progress {
	return &Progress{client: &kafka.Client{Addr: kafka.TCP(brokers...)}, topic: topic, group: group}
}

// WithAuth makes p connect with a's SASL and TLS; it returns p.
func (p *Progress) WithAuth(a Auth) (*Progress, error) {
	t, err := a.Transport()
	p.client.Transport = t
	return p, err
}

// Offsets maps a partition to an offset.
type Offsets map[int]int64

// Ends returns the offset the next message of each partition will get.
func (p *Progress) Ends(ctx context.Context) (Offsets, error) {
	md, err := p.client.Metadata(ctx, &kafka.MetadataRequest{Topics: []string{p.topic}})
	if err != nil {
		return nil, fmt.Errorf("kafka metadata: %w", err)
	}
	if len(md.Topics) != 1 || md.Topics[0].Error != nil {
		return nil, fmt.Errorf("kafka metadata of %s: %v", p.topic, md.Topics)
	}
	reqs := make([]kafka.OffsetRequest, 0, len(md.Topics[0].Partitions))
	for _, part := range md.Topics[0].Partitions {
		reqs = append(reqs, kafka.LastOffsetOf(part.ID))
	}
	resp, err := p.client.ListOffsets(ctx,
		&kafka.ListOffsetsRequest{Topics: map[string][]kafka.OffsetRequest{p.topic: reqs}})
	if err != nil {
		return nil, fmt.Errorf("kafka list offsets: %w", err)
	}
	ends := Offsets{}
	for _, po := range resp.Topics[p.topic] {
		if po.Error != nil {
			return nil, fmt.Errorf("kafka end offset of %s/%d: %w", p.topic, po.Partition, po.Error)
		}
		ends[po.Partition] = po.LastOffset
	}
	return ends, nil
}

// Committed returns the group's committed offset (the next it will read) of each of the
// given partitions; -1 where it has committed nothing.
func (p *Progress) Committed(ctx context.Context, partitions []int) (Offsets, error) {
	resp, err := p.client.OffsetFetch(ctx, &kafka.OffsetFetchRequest{GroupID: p.group,
		Topics: map[string][]int{p.topic: partitions}})
	if err != nil {
		return nil, fmt.Errorf("kafka offset fetch: %w", err)
	}
	out := Offsets{}
	if errors.Is(resp.Error, kafka.GroupIdNotFound) { // a group that never committed
		for _, part := range partitions {
			out[part] = -1
		}
		return out, nil
	}
	if resp.Error != nil {
		return nil, fmt.Errorf("kafka offset fetch: %w", resp.Error)
	}
	for _, op := range resp.Topics[p.topic] {
		if op.Error != nil {
			return nil, fmt.Errorf("kafka committed offset of %s/%d: %w", p.topic, op.Partition, op.Error)
		}
		out[op.Partition] = op.CommittedOffset
	}
	return out, nil
}

// Reached reports whether the group has committed, on every partition, at least the
// offsets in ends: everything that was on the topic when ends were taken is consumed.
func (p *Progress) Reached(ctx context.Context, ends Offsets) (bool, error) {
	if len(ends) == 0 {
		return true, nil
	}
	parts := make([]int, 0, len(ends))
	for part := range ends {
		parts = append(parts, part)
	}
	committed, err := p.Committed(ctx, parts)
	if err != nil {
		return false, err
	}
	for part, end := range ends {
		if max(committed[part], 0) < end { // -1: nothing committed, fine for an empty partition
			return false, nil
		}
	}
	return true, nil
}
