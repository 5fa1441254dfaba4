package reserve

import (
	"context"
	"net/http"

	"github.com/zeromicro/go-zero/rest/httpx"

	"github.com/seckill/seckill/api/internal/auth"
	"github.com/seckill/seckill/api/internal/middleware"
	"github.com/seckill/seckill/api/internal/reply"
	"github.com/seckill/seckill/internal/xerr"
)

// errRateLimited is the route's answer over the buyer's quota.
var errRateLimited = xerr.New(xerr.RateLimited, "too many reservation attempts, slow down")

// Authenticated is the buyer routes' authentication (the .api's BuyerJWT middleware): the
// verdict the front reached on this request, else Authenticate's; it answers 401 itself.
func (p *Pipeline) Authenticated(next http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		var uid int64
		var err error
		if st := stateOf(r.Context()); st != nil {
			uid, err = p.authenticate(r, st)
		} else {
			uid, err = p.s.Authenticate(r)
		}
		if err != nil {
			middleware.Refuse(w, r, err)
			return
		}
		next(w, r.WithContext(auth.WithUID(r.Context(), uid)))
	}
}

// Route is the reservation route's middleware (the .api's Reserve, after BuyerJWT): the
// decode, the marks and the user limit the front did not run, then next with the
// reservation (Request), then the marks learn from its answer when it is a refusal (a
// success teaches them nothing: Gate.Observe ignores it, so it is not called).
func (p *Pipeline) Route(next http.HandlerFunc) http.HandlerFunc {
	p.mounted()
	return func(w http.ResponseWriter, r *http.Request) {
		r, st := with(r)
		if err := p.check(r, st); err != nil {
			p.write(w, r, err)
			return
		}
		if err := p.allow(r.Context(), st.uid); err != nil {
			httpx.ErrorCtx(r.Context(), w, err)
			return
		}
		if p.s.ClientAddr != nil && st.addr == "" {
			st.addr = p.s.ClientAddr(r)
		}
		next(w, r.WithContext(reply.WithOutcome(r.Context(), &st.Outcome)))
		if st.Err != nil {
			p.s.Gate.Observe(st.req.ActivityId, st.gen, st.Err)
		}
	}
}

// check decodes, validates and asks the marks, each stage once per request: the answer
// when the request ends here.
func (p *Pipeline) check(r *http.Request, st *state) error {
	if !st.authed { // the buyer's authentication runs before: a wiring error
		uid, err := auth.UID(r.Context())
		if err != nil {
			return err
		}
		st.uid, st.authed = uid, true
	}
	if !st.decoded {
		req, _, err := p.s.Decode(r, false)
		if err != nil {
			return err
		}
		st.req, st.decoded = req, true
	}
	if !st.checked {
		st.gen, st.checkErr = p.s.Gate.Check(r.Context(), st.uid, &st.req)
		st.checked = true
	}
	return st.checkErr
}

// allow takes one reservation of the buyer's quota.
func (p *Pipeline) allow(ctx context.Context, uid int64) error {
	if p.s.UserQuota == nil {
		return nil
	}
	ok, err := p.s.UserQuota.Allow(ctx, uid)
	if err != nil {
		return p.s.Failure.Failed(ctx, "user", err)
	}
	if !ok {
		return errRateLimited
	}
	return nil
}
