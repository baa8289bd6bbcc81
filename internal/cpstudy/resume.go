package cpstudy

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"slices"
	"time"

	"github.com/meshbench/meshbench/internal/istiod"
	"github.com/meshbench/meshbench/internal/results"
)

// pointKey names a scale point in a mode.
type pointKey struct {
	mode Mode
	pods int
}

// begin takes the results directory for a run: a new one gets its lock
// and the raw data's file at once, holding the configuration and no
// points, so that however the run ends the directory names its study and
// can be resumed; a resumed one gets its lock, and the run continues with
// the configuration and points found there. It returns the results to
// add to, the configuration to run, the points already done and the
// lock, which the caller releases.
func begin(c Config, build istiod.Build) (*Results, Config, map[pointKey]bool, *results.Lock, error) {
	if !c.Resume {
		if err := c.Check(); err != nil {
			return nil, c, nil, nil, err
		}
		if err := os.MkdirAll(c.Dir, 0o755); err != nil {
			return nil, c, nil, nil, err
		}
		lock, err := results.Acquire(c.Dir, os.Args)
		if err != nil {
			return nil, c, nil, nil, err
		}
		res := &Results{Study: Name, Started: time.Now().UTC(), Config: c}
		res.Settings.IstiodVersion = build.Version
		if err := results.WriteJSON(c.Dir, ResultsFile, res); err != nil {
			lock.Release()
			return nil, c, nil, nil, err
		}
		return res, c, map[pointKey]bool{}, lock, nil
	}
	if _, err := os.Stat(c.Dir); err != nil {
		return nil, c, nil, nil, fmt.Errorf("control-plane study: no run to resume: %w", err)
	}
	lock, err := results.Acquire(c.Dir, os.Args)
	if err != nil {
		return nil, c, nil, nil, err
	}
	res, cfg, done, err := resumable(c, build)
	if err == nil {
		err = cfg.Check()
	}
	if err != nil {
		lock.Release()
		return nil, c, nil, nil, err
	}
	return res, cfg, done, lock, nil
}

// resumable reads the run to resume in c.Dir and checks it: its
// configuration must be one this study runs, its points must belong to
// it, and its istiod the one built here.
func resumable(c Config, build istiod.Build) (*Results, Config, map[pointKey]bool, error) {
	res, err := ReadResults(c.Dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, c, nil, fmt.Errorf("control-plane study: %s holds no control-plane study to resume (no %s)", c.Dir, ResultsFile)
	}
	if err != nil {
		return nil, c, nil, err
	}
	if !res.Finished.IsZero() {
		return nil, c, nil, fmt.Errorf("control-plane study: the run in %s is complete; nothing to resume", c.Dir)
	}
	// The study's own settings come from the run; where to find the
	// binaries, whether to keep logs and where to log, from this one.
	cfg := res.Config
	cfg.Dir, cfg.K8sBinDir, cfg.IstiodDir, cfg.Keep, cfg.StateRoot, cfg.Log, cfg.Resume = c.Dir, c.K8sBinDir, c.IstiodDir, c.Keep, c.StateRoot, c.Log, true
	if err := cfg.validate(); err != nil {
		return nil, c, nil, fmt.Errorf("%s: %w", c.Dir, err)
	}
	if v := res.Settings.IstiodVersion; v != "" && v != build.Version {
		return nil, c, nil, fmt.Errorf("control-plane study: the run in %s measured istiod %s, this machine's build is %s; resume with that build or start a new run", c.Dir, v, build.Version)
	}
	done := map[pointKey]bool{}
	for i, p := range res.Points {
		k := pointKey{p.Mode, p.Pods}
		if !slices.Contains(cfg.Modes, p.Mode) || !slices.Contains(cfg.Scales, p.Pods) || done[k] {
			return nil, c, nil, fmt.Errorf("control-plane study: %s: point %d (%s, %d pods) is not one of its configuration's, or repeats one", c.Dir, i, p.Mode, p.Pods)
		}
		done[k] = true
	}
	res.Config = cfg
	return res, cfg, done, nil
}
