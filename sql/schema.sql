-- seckill schema: MariaDB 10.11 and MySQL 8 compatible, strict SQL mode assumed.
-- Stock columns are BIGINT UNSIGNED: an underflow is an error (1690), never a wrap.

CREATE TABLE IF NOT EXISTS `activity` (
  `id` BIGINT UNSIGNED NOT NULL AUTO_INCREMENT,
  `sku_id` BIGINT UNSIGNED NOT NULL,
  `name` VARCHAR(128) NOT NULL,
  `total` BIGINT UNSIGNED NOT NULL,
  `start_time` BIGINT NOT NULL COMMENT 'unix seconds',
  `end_time` BIGINT NOT NULL COMMENT 'unix seconds',
  `per_user_limit` BIGINT UNSIGNED NOT NULL DEFAULT 1,
  `pay_timeout_seconds` BIGINT UNSIGNED NOT NULL DEFAULT 900,
  `price` BIGINT UNSIGNED NOT NULL DEFAULT 0 COMMENT 'unit price in the smallest currency unit, fixed once the activity starts',
  `merchant_id` BIGINT UNSIGNED NOT NULL DEFAULT 0,
  `draw_seconds` BIGINT UNSIGNED NOT NULL DEFAULT 0 COMMENT 'the opening draw: the first draw_seconds of the sale take entries, 0: none',
  `draw_seed` VARBINARY(32) NOT NULL DEFAULT '' COMMENT 'the draw seed: 32 random bytes fixed at creation',
  `draw_stock` BIGINT NULL DEFAULT NULL COMMENT 'the stock the draw served (remaining when it began), NULL: not begun',
  `draw_done_at` BIGINT NOT NULL DEFAULT 0 COMMENT 'unix ms the draw finished, 0: not done',
  `draw_cursor` BIGINT UNSIGNED NOT NULL DEFAULT 0 COMMENT 'entrants of the draw order decided, recorded after each chunk',
  `create_time` TIMESTAMP NOT NULL DEFAULT CURRENT_TIMESTAMP,
  `update_time` TIMESTAMP NOT NULL DEFAULT CURRENT_TIMESTAMP ON UPDATE CURRENT_TIMESTAMP,
  PRIMARY KEY (`id`),
  KEY `idx_start_time` (`start_time`),
  KEY `idx_end_time` (`end_time`),
  KEY `idx_merchant` (`merchant_id`, `id`)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4;

CREATE TABLE IF NOT EXISTS `inventory` (
  `activity_id` BIGINT UNSIGNED NOT NULL,
  `available` BIGINT UNSIGNED NOT NULL,
  `locked` BIGINT UNSIGNED NOT NULL DEFAULT 0,
  `sold` BIGINT UNSIGNED NOT NULL DEFAULT 0,
  `epoch` BIGINT UNSIGNED NOT NULL DEFAULT 0 COMMENT 'bumped by every warm-up and rebuild into Redis, 0: never warmed',
  `mode` VARCHAR(16) NOT NULL DEFAULT 'redis' COMMENT 'the book that sells: redis|mysql (degrade mode)|rebuilding',
  `update_time` TIMESTAMP NOT NULL DEFAULT CURRENT_TIMESTAMP ON UPDATE CURRENT_TIMESTAMP,
  PRIMARY KEY (`activity_id`)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4;

CREATE TABLE IF NOT EXISTS `seckill_order` (
  `id` BIGINT UNSIGNED NOT NULL AUTO_INCREMENT,
  `order_no` VARCHAR(64) NOT NULL,
  `request_id` VARCHAR(64) NOT NULL,
  `activity_id` BIGINT UNSIGNED NOT NULL,
  `uid` BIGINT UNSIGNED NOT NULL,
  `quantity` BIGINT UNSIGNED NOT NULL,
  `status` VARCHAR(16) NOT NULL COMMENT 'reserved|paid|cancelled|expired',
  `expire_at` BIGINT NOT NULL DEFAULT 0 COMMENT 'unix seconds',
  `placed_at` BIGINT NOT NULL DEFAULT 0 COMMENT 'unix seconds: when the order was reserved',
  `trade_no` VARCHAR(64) NOT NULL DEFAULT '' COMMENT 'the payment provider payment id, empty: not paid through the provider',
  `create_time` TIMESTAMP NOT NULL DEFAULT CURRENT_TIMESTAMP,
  `update_time` TIMESTAMP NOT NULL DEFAULT CURRENT_TIMESTAMP ON UPDATE CURRENT_TIMESTAMP,
  PRIMARY KEY (`id`),
  UNIQUE KEY `uk_order_no` (`order_no`),
  UNIQUE KEY `uk_activity_uid_request` (`activity_id`, `uid`, `request_id`),
  KEY `idx_activity_status` (`activity_id`, `status`),
  KEY `idx_status_expire` (`status`, `expire_at`),
  KEY `idx_uid` (`uid`),
  KEY `idx_trade_no` (`trade_no`),
  KEY `idx_activity_id` (`activity_id`, `id`)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4;

CREATE TABLE IF NOT EXISTS `stock_adjustment` (
  `id` BIGINT UNSIGNED NOT NULL AUTO_INCREMENT,
  `event_id` VARCHAR(64) NOT NULL,
  `activity_id` BIGINT UNSIGNED NOT NULL,
  `delta` BIGINT NOT NULL,
  `create_time` TIMESTAMP NOT NULL DEFAULT CURRENT_TIMESTAMP,
  PRIMARY KEY (`id`),
  UNIQUE KEY `uk_activity_event` (`activity_id`, `event_id`)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4;

CREATE TABLE IF NOT EXISTS `draw_entry` (
  `id` BIGINT UNSIGNED NOT NULL AUTO_INCREMENT,
  `activity_id` BIGINT UNSIGNED NOT NULL,
  `uid` BIGINT UNSIGNED NOT NULL,
  `quantity` BIGINT UNSIGNED NOT NULL,
  `request_id` VARCHAR(64) NOT NULL,
  `event_id` VARCHAR(64) NOT NULL COMMENT 'the entered event (outbox entry id)',
  `entered_at` BIGINT NOT NULL DEFAULT 0 COMMENT 'unix ms',
  `create_time` TIMESTAMP NOT NULL DEFAULT CURRENT_TIMESTAMP,
  PRIMARY KEY (`id`),
  UNIQUE KEY `uk_activity_uid` (`activity_id`, `uid`)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4;

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
