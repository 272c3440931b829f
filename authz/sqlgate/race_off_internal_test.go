//go:build !race

package sqlgate

// raceEnabled reports a build with the race detector, whose sync.Pool drops
// items at random: allocation counts are not stable under it.
const raceEnabled = false
