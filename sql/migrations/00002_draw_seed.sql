-- The opening draw anyone can check (docs/DESIGN.md, "The opening draw"): the seed becomes
-- 32 random bytes fixed when the activity is created (its SHA-256 is the commitment shown from
-- creation on), instead of an int64 fixed at the draw; draw_stock records what the draw served.
--
-- Activities whose draw is not done get a fresh seed (RANDOM_BYTES: the server's CSPRNG,
-- MariaDB >= 10.10, MySQL >= 5.6.17); run it when no draw is running (a draw resumed after it
-- would order the rest of its entrants by the new seed). A draw done before it keeps no seed:
-- its order was the old shuffle, and its audit shows commitment and seed "".

-- +goose Up
ALTER TABLE `activity`
  DROP COLUMN `draw_seed`,
  ADD COLUMN `draw_seed` VARBINARY(32) NOT NULL DEFAULT ''
    COMMENT 'the draw seed: 32 random bytes fixed at creation' AFTER `draw_seconds`,
  ADD COLUMN `draw_stock` BIGINT NULL DEFAULT NULL
    COMMENT 'the stock the draw served (remaining when it began), NULL: not begun' AFTER `draw_seed`;
UPDATE `activity` SET `draw_seed` = RANDOM_BYTES(32) WHERE `draw_done_at` = 0;

-- +goose Down
ALTER TABLE `activity`
  DROP COLUMN `draw_stock`,
  DROP COLUMN `draw_seed`,
  ADD COLUMN `draw_seed` BIGINT UNSIGNED NOT NULL DEFAULT 0
    COMMENT 'the draw shuffle seed, fixed once at draw_at, 0: not yet' AFTER `draw_seconds`;
