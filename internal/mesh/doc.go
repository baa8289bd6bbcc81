// Package mesh is the registry of mesh profiles: every fact about a mesh
// that the platforms, the study schema, the cost model and the reports
// share, and the settings and verification checks recorded per mesh.
package mesh
