package domain

// Activity is an activity as the inventory holds it while it sells (the Redis book's stock
// hash): what warm-up writes and the services read back.
type Activity struct {
	ActivityID int64
	SkuID      int64
	Name       string
	Counters         // the stock numbers: total = remaining + locked + sold
	Start      int64 // unix seconds
	End        int64 // unix seconds
	Limit      int64
	PayTimeout int64 // seconds
	ExpireAt   int64 // unix seconds: when the activity's keys go (end + pay timeout + grace)
	// DrawAt is when the activity's opening draw is decided (ms; 0: no draw), and Drawn
	// says it is done (docs/DESIGN.md, "The opening draw").
	DrawAt int64
	Drawn  bool
	// Epoch is inventory.epoch of the warm-up or rebuild that wrote the hash (0 in a hash
	// written before epochs existed).
	Epoch int64
	// Price is the unit price (smallest currency unit), fixed once the activity starts; 0 in a
	// hash written before prices existed.
	Price int64
}

// Counters are an activity's stock numbers.
type Counters struct {
	Total, Remaining, Locked, Sold int64
}

// LastDue is when the activity's last order can fall due (unix seconds): its end plus
// its pay timeout. The inventory's active set is scored by it, and its keys outlive it by the grace.
func (a Activity) LastDue() int64 { return a.End + a.PayTimeout }

// Order is an order as the books hold it (Redis's packed order, the ledger's row).
type Order struct {
	OrderNo    string
	ActivityID int64
	UID        int64
	Quantity   int64
	State      string
	ExpireAt   int64 // ms
	CreatedAt  int64 // ms
	RequestID  string
}

// Payment is a payment provider's notification that an order was paid (docs/API.md,
// "Payment"): its payment id, the amount it took and the activity's unit price.
// Both books take it: Redis's (internal/stock) and MySQL's in degrade mode.
type Payment struct {
	TradeNo string
	Amount  int64
	Price   int64
}

// A ReserveItem is one buyer's reservation in a batch, as either book takes it (Redis's, or
// MySQL's in degrade mode); each answers it with a Reservation or an error.
type ReserveItem struct {
	UID       int64
	Qty       int64
	RequestID string
	Addr      string // the buyer's client address ("" none): bounds a draw's entrants per address
}

// Reservation is a successful (or replayed) reservation: its order (State is the order's state
// now: reserved for a new reservation; for a replay whatever it has become, paid, cancelled or
// expired; StateQueued for an entry of the draw, with the buyer's first RequestID and no
// OrderNo; ActivityID and UID are the caller's, not set), and the stock left right after it.
type Reservation struct {
	Order
	Remaining int64
	Replay    bool
	DrawAt    int64 // an entry's (State StateQueued): when the draw is decided (ms)
}
