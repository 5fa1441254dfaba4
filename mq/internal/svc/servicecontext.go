// Package svc holds what the mq service keeps for its lifetime.
package svc

import (
	"github.com/zeromicro/go-zero/core/conf"
	"github.com/zeromicro/go-zero/core/service"
	"github.com/zeromicro/go-zero/core/stores/sqlx"

	"github.com/seckill/seckill/internal/kafkax"
	"github.com/seckill/seckill/mq/internal/config"
	"github.com/seckill/seckill/mq/internal/writer"
)

// ServiceContext is created once.
type ServiceContext struct {
	Config     config.Config
	DB         sqlx.SqlConn
	DeadLetter *kafkax.Producer
	Writer     *writer.Writer
}

// New builds the context: MySQL (rejected events do not count against the breaker), the
// dead-letter producer and the writer.
func New(c config.Config) (*ServiceContext, error) {
	var dc kafkax.Conf
	if err := conf.FillDefault(&dc); err != nil {
		return nil, err
	}
	if err := kafkax.CheckEventKey(c.EventKey, c.Mode == service.ProMode); err != nil {
		return nil, err
	}
	dc.Brokers, dc.Topic, dc.Auth = c.DeadLetter.Brokers, c.DeadLetter.Topic, c.Kafka
	if len(dc.Brokers) == 0 {
		dc.Brokers = c.Consumer.Brokers
	}
	dlq, err := kafkax.NewProducer(dc)
	if err != nil {
		return nil, err
	}
	db := writer.NewConn(c.Mysql.DataSource)
	return &ServiceContext{Config: c, DB: db, DeadLetter: dlq, Writer: writer.New(c.Writer, db, dlq)}, nil
}
