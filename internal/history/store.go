package history

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // the "pgx" database/sql driver
	_ "modernc.org/sqlite"             // the "sqlite" driver, pure Go: the binary is built with CGO off
)

// DefaultDB is the history file when none is named: beside the results
// directories `meshbench run` makes by default.
const DefaultDB = "results/history.db"

// Store is a results history: SQLite in a file (the default), or
// PostgreSQL for a team's shared history.
type Store struct {
	db       *sql.DB
	postgres bool
	where    string // the file, or the URL without its password
}

// IsPostgres reports whether where names a PostgreSQL database rather than
// a SQLite file.
func IsPostgres(where string) bool {
	return strings.HasPrefix(where, "postgres://") || strings.HasPrefix(where, "postgresql://")
}

// Open opens the history at where, a SQLite file (created if missing, in
// an existing directory) or a postgres:// URL, and brings its schema up
// to date.
func Open(ctx context.Context, where string) (*Store, error) {
	s := &Store{where: where}
	var err error
	if IsPostgres(where) {
		u, perr := url.Parse(where)
		if perr != nil {
			return nil, fmt.Errorf("--history: not a PostgreSQL URL: %v", perr)
		}
		s.postgres, s.where = true, u.Redacted()
		s.db, err = sql.Open("pgx", where)
	} else {
		if where == "" {
			return nil, errors.New("--history: name a SQLite file or a postgres:// URL")
		}
		if st, serr := os.Stat(filepath.Dir(where)); serr != nil || !st.IsDir() {
			return nil, fmt.Errorf("--history %s: directory %s does not exist (create it, or name another file)", where, filepath.Dir(where))
		}
		// One writer at a time (immediate transactions), readers beside it
		// (WAL), waiting up to 30 s for the other's turn.
		dsn := "file:" + where + "?_pragma=busy_timeout(30000)&_pragma=foreign_keys(1)&_pragma=journal_mode(WAL)&_txlock=immediate"
		s.db, err = sql.Open("sqlite", dsn)
	}
	if err != nil {
		return nil, fmt.Errorf("history %s: %w", s.where, err)
	}
	pctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if err := s.db.PingContext(pctx); err != nil {
		s.db.Close()
		return nil, fmt.Errorf("history %s: %w", s.where, err)
	}
	if err := s.migrate(ctx); err != nil {
		s.db.Close()
		return nil, err
	}
	return s, nil
}

// Close closes the history.
func (s *Store) Close() error { return s.db.Close() }

// String names the history, without a password.
func (s *Store) String() string { return s.where }

// ErrChanged refuses a run the history holds with other contents.
var ErrChanged = errors.New("the history holds this run with other contents")

// Add stores a run, with its meshes and figures, in one transaction.
// Adding a run the history already holds is a no-op (added false). One it
// holds with another study.json replaces it when it ended later (`run
// --resume` measured again the cells it had left out, keeping its ID and
// start) and is refused otherwise: an older or an edited state must not
// overwrite what the history holds.
func (s *Store) Add(ctx context.Context, r *Run) (added bool, err error) {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return false, fmt.Errorf("history %s: %w", s.where, err)
	}
	defer tx.Rollback()
	platform, err := json.Marshal(r.Provenance.Platform)
	if err != nil {
		return false, err
	}
	noise, err := json.Marshal(r.Provenance.Noise)
	if err != nil {
		return false, err
	}
	insertRun := func() (int64, error) {
		res, err := tx.ExecContext(ctx, `INSERT INTO runs (id, index_sha256, study, study_sha256, config_sha256, host_class, started, ended, added, dir,
		meshbench_version, meshbench_commit, go_version, platform, noise, excluded_cells)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16) ON CONFLICT (id) DO NOTHING`,
			r.ID, r.IndexSHA256, r.Study, r.StudyHash, r.ConfigHash, r.HostClass, stamp(r.Start), stamp(r.End), stamp(time.Now()), r.Dir,
			r.Provenance.MeshbenchVersion, r.Provenance.MeshbenchCommit, r.Provenance.GoVersion, string(platform), string(noise), r.Excluded)
		if err != nil {
			return 0, fmt.Errorf("history %s: add run %s: %w", s.where, r.ID, err)
		}
		return res.RowsAffected()
	}
	n, err := insertRun()
	if err != nil {
		return false, err
	}
	if n == 0 {
		var have, dir, ended string
		if err := tx.QueryRowContext(ctx, `SELECT index_sha256, dir, ended FROM runs WHERE id = $1`, r.ID).Scan(&have, &dir, &ended); err != nil {
			return false, fmt.Errorf("history %s: run %s: %w", s.where, r.ID, err)
		}
		switch {
		case have == r.IndexSHA256:
			return false, nil
		case stamp(r.End) <= ended:
			return false, fmt.Errorf("%s: %w (added from %s): study.json changed since, and the run did not end later", r.Dir, ErrChanged, dir)
		}
		// Stamps sort as text in time order: this state is the newer one.
		// The deletes name every table, as SQLite enforces no foreign key
		// (and so no cascade) unless asked on each connection.
		for _, del := range []string{`DELETE FROM figures WHERE run_id = $1`, `DELETE FROM meshes WHERE run_id = $1`, `DELETE FROM runs WHERE id = $1`} {
			if _, err := tx.ExecContext(ctx, del, r.ID); err != nil {
				return false, fmt.Errorf("history %s: replace run %s: %w", s.where, r.ID, err)
			}
		}
		if n, err = insertRun(); err != nil {
			return false, err
		} else if n != 1 {
			return false, fmt.Errorf("history %s: replace run %s: %d rows inserted", s.where, r.ID, n)
		}
	}
	for i, m := range r.Meshes {
		facts, err := json.Marshal(m.Facts)
		if err != nil {
			return false, err
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO meshes (run_id, mesh, position, profile, spec, release, build, istiod, config_hash, facts)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)`, r.ID, m.Name, i, m.Profile, m.Spec, m.Release, m.Build, m.Istiod, m.ConfigHash, string(facts)); err != nil {
			return false, fmt.Errorf("history %s: add mesh %s: %w", s.where, m.Name, err)
		}
	}
	stmt, err := tx.PrepareContext(ctx, `INSERT INTO figures (run_id, mesh, config, params, metric, median, lo, hi, n, level)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)`)
	if err != nil {
		return false, fmt.Errorf("history %s: %w", s.where, err)
	}
	defer stmt.Close()
	for _, f := range r.Figures {
		params, err := json.Marshal(f.Params)
		if err != nil {
			return false, err
		}
		if _, err := stmt.ExecContext(ctx, r.ID, f.Mesh, f.Config, string(params), f.Metric, f.Median, f.Lo, f.Hi, f.N, f.Level); err != nil {
			return false, fmt.Errorf("history %s: add %s's %s: %w", s.where, f.Mesh, f.Metric, err)
		}
	}
	if err := tx.Commit(); err != nil {
		return false, fmt.Errorf("history %s: %w", s.where, err)
	}
	return true, nil
}

// Load reads every run with its meshes, oldest first, and the figures of
// the metrics named (every figure when none are).
func (s *Store) Load(ctx context.Context, metrics ...string) ([]*Run, error) {
	runs, err := s.Runs(ctx)
	if err != nil {
		return nil, err
	}
	byID := map[string]*Run{}
	for _, r := range runs {
		byID[r.ID] = r
	}
	q := `SELECT run_id, mesh, config, params, metric, median, lo, hi, n, level FROM figures`
	var args []any
	if len(metrics) > 0 {
		ph := make([]string, len(metrics))
		for i, m := range metrics {
			ph[i] = fmt.Sprintf("$%d", i+1)
			args = append(args, m)
		}
		q += " WHERE metric IN (" + strings.Join(ph, ", ") + ")"
	}
	rows, err := s.db.QueryContext(ctx, q+" ORDER BY run_id, mesh, config, metric", args...)
	if err != nil {
		return nil, fmt.Errorf("history %s: %w", s.where, err)
	}
	for rows.Next() {
		var id, params string
		var f Figure
		if err := rows.Scan(&id, &f.Mesh, &f.Config, &params, &f.Metric, &f.Median, &f.Lo, &f.Hi, &f.N, &f.Level); err != nil {
			rows.Close()
			return nil, fmt.Errorf("history %s: %w", s.where, err)
		}
		if err := json.Unmarshal([]byte(params), &f.Params); err != nil {
			rows.Close()
			return nil, fmt.Errorf("history %s: run %s: %w", s.where, id, err)
		}
		if r := byID[id]; r != nil {
			r.Figures = append(r.Figures, f)
		}
	}
	if err := closeRows(rows); err != nil {
		return nil, fmt.Errorf("history %s: %w", s.where, err)
	}
	return runs, nil
}

// Runs reads every run with its meshes, oldest first, without figures.
func (s *Store) Runs(ctx context.Context) ([]*Run, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT id, index_sha256, study, study_sha256, config_sha256, host_class, started, ended, added, dir,
		meshbench_version, meshbench_commit, go_version, platform, noise, excluded_cells FROM runs ORDER BY started, id`)
	if err != nil {
		return nil, fmt.Errorf("history %s: %w", s.where, err)
	}
	var runs []*Run
	byID := map[string]*Run{}
	for rows.Next() {
		r := &Run{}
		var started, ended, added, platform, noise string
		if err := rows.Scan(&r.ID, &r.IndexSHA256, &r.Study, &r.StudyHash, &r.ConfigHash, &r.HostClass, &started, &ended, &added, &r.Dir,
			&r.Provenance.MeshbenchVersion, &r.Provenance.MeshbenchCommit, &r.Provenance.GoVersion, &platform, &noise, &r.Excluded); err != nil {
			rows.Close()
			return nil, fmt.Errorf("history %s: %w", s.where, err)
		}
		if r.Start, err = parseStamp(started); err == nil {
			if r.End, err = parseStamp(ended); err == nil {
				r.Added, err = parseStamp(added)
			}
		}
		if err == nil {
			if err = json.Unmarshal([]byte(platform), &r.Provenance.Platform); err == nil {
				err = json.Unmarshal([]byte(noise), &r.Provenance.Noise)
			}
		}
		if err != nil {
			rows.Close()
			return nil, fmt.Errorf("history %s: run %s: %w", s.where, r.ID, err)
		}
		runs = append(runs, r)
		byID[r.ID] = r
	}
	if err := closeRows(rows); err != nil {
		return nil, fmt.Errorf("history %s: %w", s.where, err)
	}
	if rows, err = s.db.QueryContext(ctx, `SELECT run_id, mesh, profile, spec, release, build, istiod, config_hash, facts FROM meshes ORDER BY run_id, position`); err != nil {
		return nil, fmt.Errorf("history %s: %w", s.where, err)
	}
	for rows.Next() {
		var id, facts string
		var m Mesh
		if err := rows.Scan(&id, &m.Name, &m.Profile, &m.Spec, &m.Release, &m.Build, &m.Istiod, &m.ConfigHash, &facts); err != nil {
			rows.Close()
			return nil, fmt.Errorf("history %s: %w", s.where, err)
		}
		if err := json.Unmarshal([]byte(facts), &m.Facts); err != nil {
			rows.Close()
			return nil, fmt.Errorf("history %s: run %s mesh %s: %w", s.where, id, m.Name, err)
		}
		if r := byID[id]; r != nil {
			r.Meshes = append(r.Meshes, m)
		}
	}
	if err := closeRows(rows); err != nil {
		return nil, fmt.Errorf("history %s: %w", s.where, err)
	}
	return runs, nil
}

func closeRows(rows *sql.Rows) error {
	err := rows.Err()
	if cerr := rows.Close(); err == nil {
		err = cerr
	}
	return err
}
