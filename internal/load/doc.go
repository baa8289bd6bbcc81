// Package load is meshbench's HTTP load engine: open-loop (constant arrival
// rate, latency from the intended send time) and closed-loop generators,
// recording into HDR histograms that merge exactly across instances.
package load
