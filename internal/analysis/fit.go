package analysis

// FitLine fits y = Idle + PerRPS x by least squares, as the capacity
// report splits a role's CPU against the rate; the predictor's profile
// (internal/predict) fits its unit costs with it too.
func FitLine(xs, ys []float64) RoleFit { return linearFit(xs, ys) }
