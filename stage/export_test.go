package stage

import (
	"errors"
	"time"
)

// RetryDelay is the delay s's retryer waits before retrying after the
// attempt-th failed attempt: tests read the backoff cap from it without
// waiting on a clock.
func RetryDelay(s *S3Store, attempt int) (time.Duration, error) {
	return s.client.Options().Retryer.RetryDelay(attempt, errors.New("a failed attempt"))
}
