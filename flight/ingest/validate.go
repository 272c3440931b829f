package ingest

import (
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/bitutil"
)

// validate checks what the Parquet writer will index in a, recursively:
// the offsets of variable-length arrays (arrow-go's ValidateFull) and every
// dictionary index against its dictionary. arrow-go does not check them
// when it reads a client's batch, and pqarrow reads some of them in
// goroutines of its own, where a panic ends the process: a dictionary index
// past its dictionary did.
func validate(a arrow.Array) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("%w: %v", ErrMalformed, r)
		}
	}()
	if v, ok := a.(interface{ ValidateFull() error }); ok {
		if err := v.ValidateFull(); err != nil {
			return fmt.Errorf("%w: %v", ErrMalformed, err)
		}
	}
	switch a := a.(type) {
	case *array.Dictionary:
		n := a.Dictionary().Len()
		for i := range a.Len() {
			if a.IsValid(i) {
				if k := a.GetValueIndex(i); k < 0 || k >= n {
					return fmt.Errorf("%w: dictionary index %d of %d values", ErrMalformed, k, n)
				}
			}
		}
		return validate(a.Dictionary())
	case array.ListLike:
		return validate(a.ListValues())
	case *array.Struct:
		for i := range a.NumField() {
			if err := validate(a.Field(i)); err != nil {
				return err
			}
		}
	}
	return nil
}

// checkBitmap checks that a's validity bitmap, if it has one, covers a:
// the bitmap of a client's batch may be short, and counting or reading its
// nulls would then read past it.
func checkBitmap(a arrow.Array) error {
	d := a.Data()
	if bufs := d.Buffers(); len(bufs) > 0 && bufs[0] != nil && int64(bufs[0].Len()) < bitutil.BytesForBits(int64(d.Offset()+d.Len())) {
		return fmt.Errorf("%w: a validity bitmap of %d bytes for %d values", ErrMalformed, bufs[0].Len(), d.Offset()+d.Len())
	}
	return nil
}

// checkRequired checks a column declared not nullable (after checkBitmap):
// a Parquet required column has no place for a null, and the writer would
// store the value under it.
func checkRequired(a arrow.Array) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("%w: %v", ErrMalformed, r)
		}
	}()
	if n := a.NullN(); n > 0 {
		return fmt.Errorf("%w: a column declared not nullable holds %d nulls", ErrMalformed, n)
	}
	return nil
}
