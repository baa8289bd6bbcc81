// Package mesh is the registry of mesh families and profiles: every fact
// about a mesh that the platforms, the study schema, the cost model and
// the reports share (names, planes, proxies' containers and default sizes,
// the lab data plane and the charts that install it, its export labels and
// cost footprint), and the settings and verification checks recorded per
// mesh.
package mesh
