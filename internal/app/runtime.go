package app

import "runtime/debug"

// DefaultGCPercent is the GC target the app runs with: see TuneRuntime.
const DefaultGCPercent = 100

// TuneRuntime readies the Go runtime of a process that runs one app: it
// sets the GC target and returns to the OS the garbage that package
// initialisation left behind (the meshbench binary links Kubernetes and
// Helm libraries whose init allocates megabytes the app never uses). It is
// process-wide, so only the app command calls it, never serve-graph.
func TuneRuntime(gcPercent int) {
	if gcPercent != 0 {
		debug.SetGCPercent(gcPercent)
	}
	debug.FreeOSMemory()
}
