// Package search finds the capacity of a system at a latency and
// error-rate objective (an SLO): the offered rate at which a trial is as
// likely to break the SLO as to meet it. The rate grows geometrically
// until the SLO has been seen both met and broken; then each locating
// trial runs where a censored logistic fit of every trial's SLO score so
// far puts the capacity, and the final fit gives the estimate (where its
// line, moved by the trials' median residual, crosses the SLO's limit),
// its interval from a parametric bootstrap of the whole search, or, for a
// search cut short, a bound. Every trial carries the requests its
// percentile needs. It knows nothing of load engines or platforms: a
// Trial function runs one trial, and a Search is a state machine that
// several searches' callers can step in turn, interleaving their trials.
// Simulate validates it on synthetic systems of known capacity.
package search
