package catalog_test

import (
	"encoding/json"
	"reflect"
	"time"
)

var catalogEpoch = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

func equalJSON(a, b any) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return reflect.DeepEqual(x, y)
}
