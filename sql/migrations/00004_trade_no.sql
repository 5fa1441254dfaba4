-- Payments from the provider (docs/DESIGN.md, "Prices and payments"): the provider's payment
-- id of an order paid through its notification, kept with the order ('' for an order paid by
-- the buyer's own pay route, or not paid). One statement: the column and its index.

-- +goose Up
ALTER TABLE `seckill_order`
  ADD COLUMN `trade_no` VARCHAR(64) NOT NULL DEFAULT ''
    COMMENT 'the payment provider payment id, empty: not paid through the provider' AFTER `placed_at`,
  ADD KEY `idx_trade_no` (`trade_no`);
