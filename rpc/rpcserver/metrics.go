package rpcserver

import (
	"context"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promauto"
	"google.golang.org/grpc"

	"github.com/seckill/seckill/internal/xerr"
	"github.com/seckill/seckill/rpc/inventory"
)

// Metrics of the inventory service's outcomes on the default Prometheus registry, labelled by
// the code words of internal/xerr plus "OK".
var (
	metricReservations = promauto.NewCounterVec(prometheus.CounterOpts{
		Namespace: "seckill", Subsystem: "inventory", Name: "reservations_total",
		Help: "Reservations (Reserve calls and ReserveBatch items) by outcome: OK (replays included) or the " +
			"code word (SOLD_OUT, LIMIT_EXCEEDED, BUSY ...).",
	}, []string{"code"})
	metricOrderOps = promauto.NewCounterVec(prometheus.CounterOpts{
		Namespace: "seckill", Subsystem: "inventory", Name: "order_ops_total",
		Help: "Pay (Confirm) and cancel (Release) calls by outcome: OK or the code word.",
	}, []string{"op", "code"})
)

// outcomeOp names the counted RPCs.
var outcomeOp = map[string]string{
	inventory.Inventory_Confirm_FullMethodName: "pay",
	inventory.Inventory_Release_FullMethodName: "cancel",
}

// countOutcomes counts the outcome of Reserve, Confirm and Release; it runs inside xerr's
// interceptor, so it sees the logic's error before it becomes a status.
func countOutcomes(ctx context.Context, req any, info *grpc.UnaryServerInfo,
	handler grpc.UnaryHandler) (any, error) {
	resp, err := handler(ctx, req)
	code := "OK"
	if err != nil {
		code = string(xerr.FromStatus(err).Code)
	}
	switch info.FullMethod {
	case inventory.Inventory_Reserve_FullMethodName:
		metricReservations.WithLabelValues(code).Inc()
	case inventory.Inventory_ReserveBatch_FullMethodName:
		countBatch(req, resp, code)
	default:
		if op, ok := outcomeOp[info.FullMethod]; ok {
			metricOrderOps.WithLabelValues(op, code).Inc()
		}
	}
	return resp, err
}

// countBatch counts each item of a ReserveBatch: its own outcome, or the call's when the call failed.
func countBatch(req, resp any, code string) {
	if r, ok := resp.(*inventory.ReserveBatchResp); ok && code == "OK" {
		for _, it := range r.Results {
			if it.Code == "" {
				metricReservations.WithLabelValues("OK").Inc()
			} else {
				metricReservations.WithLabelValues(it.Code).Inc()
			}
		}
		return
	}
	if in, ok := req.(*inventory.ReserveBatchReq); ok {
		metricReservations.WithLabelValues(code).Add(float64(len(in.Items)))
	}
}
