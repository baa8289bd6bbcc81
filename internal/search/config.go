package search

import (
	"fmt"
	"time"
)

// Config is one search's settings. Zero fields take the defaults noted.
type Config struct {
	SLO SLO `json:"slo"`
	// Start is the first rate tried, in requests per second.
	Start float64 `json:"start_rps"`
	// Growth multiplies the rate while the SLO holds; default 2.
	Growth float64 `json:"growth"`
	// Precision is the bracket's relative width at which bisection stops:
	// (upper - lower) / lower; default 0.05.
	Precision float64 `json:"precision"`
	// Short is the measured duration of grow and bisect trials, Full that
	// of confirmation trials; defaults 5s and 20s.
	Short time.Duration `json:"short"`
	Full  time.Duration `json:"full"`
	// Confirmations is how many full-length trials of evidence a rate
	// needs to be decided: its goal, Confirmations × Full, is the trial
	// time over which ExceedRatio is reckoned; default 3.
	Confirmations int `json:"confirmations"`
	// ExceedRatio is the share of a rate's goal trial time that may break
	// the SLO with the rate still met (MLRsearch's goal exceed ratio): a
	// rate is met once its passing full-length time reaches (1 -
	// ExceedRatio) of the goal, and broken once its failing time exceeds
	// ExceedRatio of it. Default 0.5: a rate is met when most of its
	// full-length time meets the SLO, so that one trial of a bimodal p99
	// neither makes nor breaks it. 0 takes the default; a strict rule
	// (every full-length trial must pass) is a value under one trial's
	// share, such as 0.01.
	ExceedRatio float64 `json:"exceed_ratio"`
	// Budget bounds the measured trial time of the search, all phases;
	// when the next trial would overrun it the search stops with what it
	// has and says so. Zero: no bound beyond MaxTrials.
	Budget time.Duration `json:"budget,omitempty"`
	// Retries bounds the re-runs of an inconclusive trial; default 2.
	Retries int `json:"retries"`
	// MinRate and MaxRate bound the rates tried; MaxRate 0 is unbounded.
	// Default MinRate: the rate at which a short trial holds MinSamples
	// requests (at most Start), below which a p99 means little.
	MinRate float64 `json:"min_rps"`
	MaxRate float64 `json:"max_rps,omitempty"`
	// MaxTrials bounds the search; default 40.
	MaxTrials int `json:"max_trials"`
	// Unit names what the rates count in the search's notes; default
	// "req/s". A search over another quantity (connections held open)
	// names it here.
	Unit string `json:"unit,omitempty"`
}

// Defaults.
const (
	DefaultGrowth        = 2.0
	DefaultPrecision     = 0.05
	DefaultShort         = 5 * time.Second
	DefaultFull          = 20 * time.Second
	DefaultConfirmations = 3
	DefaultExceedRatio   = 0.5
	DefaultRetries       = 2
	DefaultMaxTrials     = 40
	// MinSamples is the fewest requests a short trial should hold for its
	// p99 to be more than its maximum.
	MinSamples = 100
)

// WithDefaults fills in zero fields.
func (c Config) WithDefaults() Config {
	if c.Growth == 0 {
		c.Growth = DefaultGrowth
	}
	if c.Precision == 0 {
		c.Precision = DefaultPrecision
	}
	if c.Short == 0 {
		c.Short = DefaultShort
	}
	if c.Full == 0 {
		c.Full = DefaultFull
	}
	if c.Confirmations == 0 {
		c.Confirmations = DefaultConfirmations
	}
	if c.ExceedRatio == 0 {
		c.ExceedRatio = DefaultExceedRatio
	}
	if c.Retries == 0 {
		c.Retries = DefaultRetries
	}
	if c.MinRate == 0 {
		// A p99 from fewer than 100 requests is the largest of a handful.
		c.MinRate = MinSamples / c.Short.Seconds()
		if c.Start > 0 {
			c.MinRate = min(c.MinRate, c.Start)
		}
	}
	if c.MaxTrials == 0 {
		c.MaxTrials = DefaultMaxTrials
	}
	if c.Unit == "" {
		c.Unit = "req/s"
	}
	return c
}

// Validate says what is wrong with a defaulted configuration.
func (c Config) Validate() error {
	if err := c.SLO.Validate(); err != nil {
		return err
	}
	switch {
	case c.Start <= 0:
		return fmt.Errorf("start_rate must be positive")
	case c.Growth <= 1:
		return fmt.Errorf("growth %g must be above 1", c.Growth)
	case c.Precision <= 0 || c.Precision >= 1:
		return fmt.Errorf("precision %g must be in (0, 1), a share of the rate such as 0.05", c.Precision)
	case c.Short <= 0 || c.Full < c.Short:
		return fmt.Errorf("trial durations: short (%s) must be positive and full (%s) at least as long", c.Short, c.Full)
	case c.Confirmations < 1:
		return fmt.Errorf("confirmations must be at least 1")
	case c.ExceedRatio < 0 || c.ExceedRatio >= 1:
		return fmt.Errorf("exceed_ratio %g must be in [0, 1), a share of the confirmation time such as 0.5", c.ExceedRatio)
	case c.Budget < 0:
		return fmt.Errorf("budget must not be negative")
	case c.Budget > 0 && c.Budget < c.Full:
		return fmt.Errorf("budget %s leaves no room for one confirmation trial of %s", c.Budget, c.Full)
	case c.Retries < 0:
		return fmt.Errorf("retries must not be negative")
	case c.MinRate <= 0 || c.MinRate > c.Start:
		return fmt.Errorf("min rate %g must be positive and at most the start rate %g", c.MinRate, c.Start)
	case c.MaxRate != 0 && c.MaxRate < c.Start:
		return fmt.Errorf("max rate %g is below the start rate %g", c.MaxRate, c.Start)
	case c.MaxTrials < 2*c.Confirmations+1:
		return fmt.Errorf("max trials %d leaves no room for %d confirmations at both ends of a bracket", c.MaxTrials, c.Confirmations)
	}
	return nil
}
