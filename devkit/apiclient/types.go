package apiclient

// The API's JSON bodies (docs/API.md), as a client reads them.

// RedisBook is an activity's book in Redis.
type RedisBook struct {
	Remaining int64 `json:"remaining"`
	Locked    int64 `json:"locked"`
	Sold      int64 `json:"sold"`
}

// DBBook is an activity's book in MySQL.
type DBBook struct {
	Available int64 `json:"available"`
	Locked    int64 `json:"locked"`
	Sold      int64 `json:"sold"`
}

// DrawView is the admin view's "draw" of an activity with an opening draw.
type DrawView struct {
	Seconds    int64  `json:"seconds"`
	DrawAt     int64  `json:"draw_at"`
	Commitment string `json:"commitment"` // lowercase hex SHA-256 of the seed
	Seed       string `json:"seed"`       // lowercase hex, "" until the draw is done
	Entries    int64  `json:"entries"`
	Status     string `json:"status"` // pending | drawing | done
	Winners    int64  `json:"winners"`
}

// DrawAudit is a draw's audit (GET /v1/admin/activities/{id}/draw): with it anyone
// recomputes the winners.
type DrawAudit struct {
	Stock      int64  `json:"stock"`
	Commitment string `json:"commitment"`
	Seed       string `json:"seed"`
	Status     string `json:"status"`
	Entrants   []struct {
		UID      int64 `json:"uid"`
		Quantity int64 `json:"quantity"`
	} `json:"entrants"`
	Winners []int64 `json:"winners"`
}

// OrderRow is an order as the merchant's orders list (and its CSV export) shows it.
type OrderRow struct {
	OrderNo   string `json:"order_no"`
	UID       int64  `json:"uid"`
	Quantity  int64  `json:"quantity"`
	Amount    int64  `json:"amount"`
	Status    string `json:"status"`
	TradeNo   string `json:"trade_no"` // "" unless paid through the payment provider
	CreatedAt int64  `json:"created_at"`
	UpdatedAt int64  `json:"updated_at"`
}

// OrderPage is a page of the merchant's orders list, in the order MySQL stored them;
// NextCursor is "" on the last page.
type OrderPage struct {
	Orders     []OrderRow `json:"orders"`
	NextCursor string     `json:"next_cursor"`
}

// Activity is a merchant's view of an activity: the create answer, a list item, and the
// admin read (which adds both books and, with a draw, the draw).
type Activity struct {
	ActivityID        int64      `json:"activity_id"`
	SkuID             int64      `json:"sku_id"`
	Name              string     `json:"name"`
	Stock             int64      `json:"stock"`
	StartTime         int64      `json:"start_time"`
	EndTime           int64      `json:"end_time"`
	PerUserLimit      int64      `json:"per_user_limit"`
	PayTimeoutSeconds int64      `json:"pay_timeout_seconds"`
	DrawSeconds       int64      `json:"draw_seconds"`
	Price             int64      `json:"price"` // the unit price, smallest currency unit
	Redis             *RedisBook `json:"redis"` // nil when not warm
	DB                DBBook     `json:"db"`
	Draw              *DrawView  `json:"draw"`
}

// NewActivity is the body of POST /v1/admin/activities (zero PerUserLimit,
// PayTimeoutSeconds, DrawSeconds: the API's defaults).
type NewActivity struct {
	SkuID             int64  `json:"sku_id"`
	Name              string `json:"name"`
	Stock             int64  `json:"stock"`
	StartTime         int64  `json:"start_time"`
	EndTime           int64  `json:"end_time"`
	PerUserLimit      int64  `json:"per_user_limit,omitempty"`
	PayTimeoutSeconds int64  `json:"pay_timeout_seconds,omitempty"`
	DrawSeconds       int64  `json:"draw_seconds,omitempty"`
	Price             int64  `json:"price,omitempty"`
}

// ActivityEdit is the body of PUT /v1/admin/activities/{id}, an edit before the start: create's
// fields; Stock, when set, must be the activity's total now (it changes through /stock).
type ActivityEdit struct {
	SkuID             int64  `json:"sku_id"`
	Name              string `json:"name"`
	Stock             *int64 `json:"stock,omitempty"`
	StartTime         int64  `json:"start_time"`
	EndTime           int64  `json:"end_time"`
	PerUserLimit      int64  `json:"per_user_limit,omitempty"`
	PayTimeoutSeconds int64  `json:"pay_timeout_seconds,omitempty"`
	DrawSeconds       int64  `json:"draw_seconds,omitempty"`
	Price             int64  `json:"price,omitempty"`
}

// ActivityList is GET /v1/admin/activities.
type ActivityList struct {
	Activities []Activity `json:"activities"`
	Page       int64      `json:"page"`
	Size       int64      `json:"size"`
	Total      int64      `json:"total"`
}

// Warmup is the warm-up's answer.
type Warmup struct {
	Warmed    bool  `json:"warmed"`
	Remaining int64 `json:"remaining"`
}

// Adjusted is a stock adjustment's answer: the Redis book after it.
type Adjusted struct {
	Total     int64 `json:"total"`
	Remaining int64 `json:"remaining"`
	Locked    int64 `json:"locked"`
	Sold      int64 `json:"sold"`
}

// Reconcile is the reconciliation's answer.
type Reconcile struct {
	ActivityID int64      `json:"activity_id"`
	Status     string     `json:"status"` // consistent | in_flight | mismatch
	Redis      *RedisBook `json:"redis"`
	DB         DBBook     `json:"db"`
	InFlight   int64      `json:"in_flight"`
	Diffs      []string   `json:"diffs"`
}

// BuyerActivity is GET /v1/activities/{id}.
type BuyerActivity struct {
	ActivityID   int64  `json:"activity_id"`
	SkuID        int64  `json:"sku_id"`
	Name         string `json:"name"`
	StartTime    int64  `json:"start_time"`
	EndTime      int64  `json:"end_time"`
	PerUserLimit int64  `json:"per_user_limit"`
	Remaining    int64  `json:"remaining"`
	Status       string `json:"status"` // upcoming | active | sold_out | ended
	Price        int64  `json:"price"`
}

// Reservation is a reservation's answer: a 200 order (OrderNo, ExpireAt, Remaining) or a
// 202 entry of the opening draw (RequestID, DrawAt; Status "queued").
type Reservation struct {
	OrderNo    string `json:"order_no"`
	ActivityID int64  `json:"activity_id"`
	Quantity   int64  `json:"quantity"`
	Status     string `json:"status"`
	ExpireAt   int64  `json:"expire_at"`
	Remaining  int64  `json:"remaining"`
	RequestID  string `json:"request_id"`
	DrawAt     int64  `json:"draw_at"`
	Amount     int64  `json:"amount"` // quantity x price
}

// Order is GET /v1/seckill/orders/{order_no}, and the answer of pay and cancel (OrderNo
// and Status only).
type Order struct {
	OrderNo    string `json:"order_no"`
	ActivityID int64  `json:"activity_id"`
	Quantity   int64  `json:"quantity"`
	Status     string `json:"status"` // reserved | paid | cancelled | expired
	ExpireAt   int64  `json:"expire_at"`
	CreatedAt  int64  `json:"created_at"`
	Amount     int64  `json:"amount"` // quantity x price
}

// Entry is GET /v1/seckill/entries/{activity_id}: a buyer's entry of the opening draw.
type Entry struct {
	ActivityID int64  `json:"activity_id"`
	RequestID  string `json:"request_id"`
	Quantity   int64  `json:"quantity"`
	Status     string `json:"status"` // queued | won | lost
	OrderNo    string `json:"order_no"`
	DrawAt     int64  `json:"draw_at"`
}

// Health is GET /healthz.
type Health struct {
	Status   string  `json:"status"` // ok | degraded
	Degraded []int64 `json:"degraded"`
	RedisUp  *bool   `json:"redis_up"`
}

// Payment is the payment provider's notification (POST /v1/payments/notify) and its answer
// (OrderNo, Status "paid", TradeNo).
type Payment struct {
	OrderNo string `json:"order_no"`
	Amount  int64  `json:"amount"` // always sent: a free order's is 0, and the API requires the field
	TradeNo string `json:"trade_no"`
	Status  string `json:"status,omitempty"`
}
