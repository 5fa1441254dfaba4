-- The merchant's orders list and CSV export (docs/DESIGN.md, "The merchant's orders"): an
-- activity's orders in row id order, read in keyset pages (activity_id = ? AND id > ? ORDER
-- BY id), without a sort. idx_activity_status serves the same read with a status. One statement.

-- +goose Up
ALTER TABLE `seckill_order` ADD KEY `idx_activity_id` (`activity_id`, `id`);
