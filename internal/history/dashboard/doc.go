// Package dashboard serves a results history as a local web page: the
// runs, a trend chart of each series with its intervals and change points,
// one run against another, and each run's report. Every asset is in the
// binary; the pages load nothing from elsewhere and run no script.
package dashboard
