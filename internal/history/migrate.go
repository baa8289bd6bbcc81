package history

import (
	"context"
	"database/sql"
	"fmt"
	"time"
)

// migrations are the history's schema, one step per version (a list of
// statements), applied in order, each in its own transaction, never edited once released: a new
// column or table is a new step. The SQL is the subset SQLite and
// PostgreSQL share, with $N parameters, which both take.
var migrations = [][]string{
	// 1: runs, their meshes and their figures.
	{`CREATE TABLE runs (
		id TEXT PRIMARY KEY,
		index_sha256 TEXT NOT NULL,
		study TEXT NOT NULL,
		study_sha256 TEXT NOT NULL,
		config_sha256 TEXT NOT NULL,
		host_class TEXT NOT NULL,
		started TEXT NOT NULL,
		ended TEXT NOT NULL,
		added TEXT NOT NULL,
		dir TEXT NOT NULL,
		meshbench_version TEXT NOT NULL,
		meshbench_commit TEXT NOT NULL,
		go_version TEXT NOT NULL,
		platform TEXT NOT NULL,
		noise TEXT NOT NULL,
		excluded_cells INTEGER NOT NULL
	)`,
		`CREATE TABLE meshes (
		run_id TEXT NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
		mesh TEXT NOT NULL,
		position INTEGER NOT NULL,
		profile TEXT NOT NULL,
		spec TEXT NOT NULL,
		release TEXT NOT NULL,
		build TEXT NOT NULL,
		istiod TEXT NOT NULL,
		config_hash TEXT NOT NULL,
		facts TEXT NOT NULL,
		PRIMARY KEY (run_id, mesh)
	)`,
		`CREATE TABLE figures (
		run_id TEXT NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
		mesh TEXT NOT NULL,
		config TEXT NOT NULL,
		params TEXT NOT NULL,
		metric TEXT NOT NULL,
		median DOUBLE PRECISION NOT NULL,
		lo DOUBLE PRECISION NOT NULL,
		hi DOUBLE PRECISION NOT NULL,
		n INTEGER NOT NULL,
		level DOUBLE PRECISION NOT NULL,
		PRIMARY KEY (run_id, mesh, config, metric)
	)`,
		`CREATE INDEX figures_metric ON figures (metric)`,
		`CREATE INDEX runs_study ON runs (study, started)`},
}

// SchemaVersion is the history schema this meshbench writes.
var SchemaVersion = len(migrations)

// migrate brings the database to SchemaVersion, refusing one a newer
// meshbench made. Migrations from concurrent processes take turns: under
// PostgreSQL an advisory lock, under SQLite the write lock every
// transaction takes at its start (_txlock=immediate).
func (s *Store) migrate(ctx context.Context) error {
	if _, err := s.db.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, applied TEXT NOT NULL)`); err != nil {
		return fmt.Errorf("history %s: %w", s.where, err)
	}
	for {
		done, err := s.migrateOne(ctx)
		if err != nil || done {
			return err
		}
	}
}

// migrateOne applies the next migration, or reports that there is none.
func (s *Store) migrateOne(ctx context.Context) (done bool, err error) {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return false, fmt.Errorf("history %s: %w", s.where, err)
	}
	defer tx.Rollback()
	if s.postgres {
		if _, err := tx.ExecContext(ctx, `SELECT pg_advisory_xact_lock(4857437)`); err != nil {
			return false, fmt.Errorf("history %s: %w", s.where, err)
		}
	}
	var v sql.NullInt64
	if err := tx.QueryRowContext(ctx, `SELECT MAX(version) FROM schema_migrations`).Scan(&v); err != nil {
		return false, fmt.Errorf("history %s: %w", s.where, err)
	}
	have := int(v.Int64)
	switch {
	case have > SchemaVersion:
		return false, fmt.Errorf("history %s is at schema %d, and this meshbench knows schemas up to %d: use a newer meshbench", s.where, have, SchemaVersion)
	case have == SchemaVersion:
		return true, nil
	}
	for _, stmt := range migrations[have] {
		if _, err := tx.ExecContext(ctx, stmt); err != nil {
			return false, fmt.Errorf("history %s: migration %d: %w", s.where, have+1, err)
		}
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO schema_migrations (version, applied) VALUES ($1, $2)`, have+1, stamp(time.Now())); err != nil {
		return false, fmt.Errorf("history %s: migration %d: %w", s.where, have+1, err)
	}
	return false, tx.Commit()
}

// stamp formats a time so that stamps sort as text in time order.
func stamp(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05.000000000Z") }

func parseStamp(s string) (time.Time, error) { return time.Parse("2006-01-02T15:04:05.000000000Z", s) }
