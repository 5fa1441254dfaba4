package stock

import (
	"context"
	"strconv"
)

// activeMember is one activity of the active set with its score, the last due time.
type activeMember struct {
	id      int64
	lastDue int64 // unix seconds: end + pay timeout
}

// Activate records the activity in the active set, scored by lastDue (domain.Activity.LastDue), which
// the relay and the jobs walk.
func (s *Store) Activate(ctx context.Context, aid, lastDue int64) error {
	_, err := s.rds.ZaddCtx(ctx, s.keys.active(), lastDue, strconv.FormatInt(aid, 10))
	return dep(err)
}

// Active lists the activities of the active set whose last due time (end + pay timeout, unix
// seconds) is from..to: activity id -> its last due time. The warm ones are Active(now, noEnd).
func (s *Store) Active(ctx context.Context, from, to int64) (map[int64]int64, error) {
	es, err := s.active(ctx, from, to)
	if err != nil {
		return nil, err
	}
	due := make(map[int64]int64, len(es))
	for _, e := range es {
		due[e.id] = e.lastDue
	}
	return due, nil
}

// Deactivate removes the activity from the active set (the relay retires it).
func (s *Store) Deactivate(ctx context.Context, aid int64) error {
	_, err := s.rds.ZremCtx(ctx, s.keys.active(), strconv.FormatInt(aid, 10))
	return dep(err)
}

// active reads the active set between two last due times; a member that is not an id is skipped.
func (s *Store) active(ctx context.Context, from, to int64) ([]activeMember, error) {
	pairs, err := s.rds.ZrangebyscoreWithScoresCtx(ctx, s.keys.active(), from, to)
	if err != nil {
		return nil, dep(err)
	}
	es := make([]activeMember, 0, len(pairs))
	for _, p := range pairs {
		if id, err := strconv.ParseInt(p.Key, 10, 64); err == nil {
			es = append(es, activeMember{id: id, lastDue: p.Score})
		}
	}
	return es, nil
}
