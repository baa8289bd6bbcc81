package load

import (
	"testing"
	"time"
)

// BenchmarkScheduleClaim is what handing out one send costs the engine's
// hot path, by arrival process: uniform computes a due time from the hit
// count; poisson draws an exponential gap under a lock. Parallel is four
// goroutines a CPU claiming at once, as connections' workers do.
func BenchmarkScheduleClaim(b *testing.B) {
	for _, arrivals := range []string{ArrivalsUniform, ArrivalsPoisson} {
		o := Options{Rate: 1e6, Arrivals: arrivals}
		if arrivals == ArrivalsPoisson {
			o.Seed = 1
		}
		b.Run(arrivals, func(b *testing.B) {
			s := newSchedule(&o, 0)
			b.ReportAllocs()
			for b.Loop() {
				s.claim(time.Duration(0))
			}
		})
		b.Run(arrivals+"/parallel", func(b *testing.B) {
			s := newSchedule(&o, 0)
			b.ReportAllocs()
			b.SetParallelism(4)
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					s.claim(0)
				}
			})
		})
	}
}
