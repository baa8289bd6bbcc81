// Package predict predicts what each mesh adds to a user's own service
// graph, at their rate and tenant count, from a profile: the unit costs a
// short profiling run (the profile preset) measured on the lab. A profile
// holds, per mesh, each proxy role's idle CPU and per-request CPU by side
// (receiving, calling, the generator's), its memory at rest and its growth
// per known service and per connection, and the latency one hop adds as a
// distribution, by protocol and payload. A prediction walks the graph's
// request tree: hops combine by convolution in sequence and by maximum in
// parallel, CPU is idle plus per-request cost times each hop's rate, and
// nodes and dollars come from the cost model. See docs/predict.md.
package predict
