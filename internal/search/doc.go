// Package search finds the highest offered rate at which a system meets a
// latency and error-rate objective (an SLO), in the manner of FD.io's
// MLRsearch (IETF bmwg draft-ietf-bmwg-mlrsearch): the rate grows
// geometrically until the SLO breaks, the bracket is then bisected to a
// relative precision with short trials, and full-length confirmation
// trials at both ends of the bracket close the search and give the
// capacity an interval. It knows nothing of load engines or platforms: a
// Trial function runs one trial, and a Search is a state machine that
// several searches' callers can step in turn, interleaving their trials.
package search
