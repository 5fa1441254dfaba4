-- Idempotent merchant writes (docs/DESIGN.md, "Idempotent merchant writes"): the Idempotency-Key
-- of a creation, inserted in the activity's transaction, so a repeat finds the activity it made.

-- +goose Up
CREATE TABLE IF NOT EXISTS `idempotency_key` (
  `id` BIGINT UNSIGNED NOT NULL AUTO_INCREMENT,
  `merchant_id` BIGINT UNSIGNED NOT NULL,
  `idem_key` VARCHAR(96) NOT NULL COMMENT 'the merchant-scoped Idempotency-Key, mid:key',
  `fingerprint` CHAR(64) NOT NULL COMMENT 'SHA-256 hex of the request (method, path, canonical JSON body)',
  `activity_id` BIGINT UNSIGNED NOT NULL COMMENT 'the activity the request created',
  `create_time` TIMESTAMP NOT NULL DEFAULT CURRENT_TIMESTAMP,
  PRIMARY KEY (`id`),
  UNIQUE KEY `uk_merchant_key` (`merchant_id`, `idem_key`)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4;

-- +goose Down
DROP TABLE IF EXISTS `idempotency_key`;
