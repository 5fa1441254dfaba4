package xerr

import (
	"context"

	"github.com/zeromicro/go-zero/core/logc"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// UnaryServerInterceptor turns the errors a logic returns into gRPC statuses carrying
// the API code word: the one place where that happens on the server side. Errors that
// are not business outcomes are logged once, here, and leave as Internal.
func UnaryServerInterceptor(ctx context.Context, req any, info *grpc.UnaryServerInfo,
	handler grpc.UnaryHandler) (any, error) {
	resp, err := handler(ctx, req)
	if err == nil {
		return resp, nil
	}
	st := ToStatus(err)
	if s, _ := status.FromError(st); s.Code() == codes.Internal {
		logc.Errorf(ctx, "%s: %v", info.FullMethod, err)
	}
	return nil, st
}
