package config

// AddrLimitConf limits per client address, beside the per-user RateLimit: reservations
// (many accounts behind one address) and failed authentications (token guessing, log
// flooding). Failed authentications are counted in Redis (go-zero PeriodLimit), shared by
// every gateway; reservations in the gateway's memory, and with ReserveShared in Redis as
// well (svc.SharedCounts: a share of a pipelined round trip per reservation, before the
// sold-out mark can answer).
type AddrLimitConf struct {
	Enabled bool `json:",default=true"`
	// At most ReserveQuota reservations per Period seconds from one address.
	Period        int  `json:",default=1,range=[1:3600]"`
	ReserveQuota  int  `json:",default=50,range=[1:1000000]"`
	ReserveShared bool `json:",default=false"`
	// At most AuthFailQuota 401 answers per AuthFailPeriod seconds to one address; past
	// it, the address gets 429 RATE_LIMITED on every route until AuthFailPeriod has passed.
	AuthFailPeriod int `json:",default=60,range=[1:86400]"`
	AuthFailQuota  int `json:",default=20,range=[1:1000000]"`
	// ClientIPHeader names the header a load balancer sets to the client's address
	// (X-Real-IP, or X-Forwarded-For: its last address not in TrustedProxies); it is read
	// only on requests from TrustedProxies. Empty: the connection's remote address.
	ClientIPHeader string `json:",optional"`
	// TrustedProxies are the addresses or CIDR blocks of the load balancers whose
	// ClientIPHeader is believed; empty (the default): no request's.
	TrustedProxies []string `json:",optional"`
}

// Limiter failure policies (Config.LimiterFailure): what a limiter does when its Redis
// cannot answer.
const (
	FailOpen   = "open"   // let the request through, count seckill_api_limiter_failures_total
	FailClosed = "closed" // answer 503 BUSY
)
