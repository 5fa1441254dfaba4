-- Prices (docs/DESIGN.md, "Payments from the provider"): an activity's unit price in the
-- smallest unit of the shop's one currency (cents for EUR/USD), an integer 0..10^9 set when the
-- activity is created and fixed once it starts. An order's amount is its quantity times it.
-- Activities created before this migration cost 0.

-- +goose Up
ALTER TABLE `activity`
  ADD COLUMN `price` BIGINT UNSIGNED NOT NULL DEFAULT 0
    COMMENT 'unit price in the smallest currency unit, fixed once the activity starts' AFTER `pay_timeout_seconds`;

