package schema

// MigrateFS is Migrate with other migration files (tests: a migration of their own).
var MigrateFS = migrate

// MigrationFiles are the embedded migrations as Migrate reads them.
var MigrationFiles = migrationFiles
