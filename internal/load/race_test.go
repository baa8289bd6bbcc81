//go:build race

package load

// raceEnabled: timing-sensitive tests skip under the race detector.
const raceEnabled = true
