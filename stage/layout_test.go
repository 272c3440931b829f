package stage_test

import (
	"errors"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"lakegate/stage"
	"lakegate/stage/stagetest"
)

const seg = "0123456789abcdef0123456789abcdef"

func TestTableFileKey(t *testing.T) {
	cases := []struct {
		id, seg string
		part    int
		want    string
		err     error
	}{
		{"t1", seg, 0, "tables/t1/" + seg + "/part-0.parquet", nil},
		{"orders-2024", seg, 17, "tables/orders-2024/" + seg + "/part-17.parquet", nil},
		{strings.Repeat("a", 64), seg, 1 << 40, "tables/" + strings.Repeat("a", 64) + "/" + seg + "/part-1099511627776.parquet", nil},
		{"a", seg, 0, "tables/a/" + seg + "/part-0.parquet", nil},
		{"", seg, 0, "", stage.ErrInvalidStorageID},
		{strings.Repeat("a", 65), seg, 0, "", stage.ErrInvalidStorageID},
		{"-t", seg, 0, "", stage.ErrInvalidStorageID},
		{"t-", seg, 0, "", stage.ErrInvalidStorageID},
		{"-", seg, 0, "", stage.ErrInvalidStorageID},
		{"T1", seg, 0, "", stage.ErrInvalidStorageID},
		{"t_1", seg, 0, "", stage.ErrInvalidStorageID},
		{"t.1", seg, 0, "", stage.ErrInvalidStorageID},
		{"..", seg, 0, "", stage.ErrInvalidStorageID},
		{"a/b", seg, 0, "", stage.ErrInvalidStorageID},
		{"t\x00", seg, 0, "", stage.ErrInvalidStorageID},
		{"t1", "", 0, "", stage.ErrInvalidSegment},
		{"t1", strings.ToUpper(seg), 0, "", stage.ErrInvalidSegment},
		{"t1", seg + "0", 0, "", stage.ErrInvalidSegment},
		{"t1", "../../../../../../../../../../..", 0, "", stage.ErrInvalidSegment},
		{"t1", seg, -1, "", stage.ErrInvalidSegment},
	}
	for _, c := range cases {
		got, err := stage.TableFileKey(c.id, c.seg, c.part)
		if got != c.want || !errors.Is(err, c.err) {
			t.Errorf("TableFileKey(%q, %q, %d) = %q, %v; want %q, %v", c.id, c.seg, c.part, got, err, c.want, c.err)
		}
		prefix, err := stage.TablePrefix(c.id)
		if c.want != "" && (err != nil || !strings.HasPrefix(c.want, prefix) || prefix != "tables/"+c.id+"/") {
			t.Errorf("TablePrefix(%q) = %q, %v", c.id, prefix, err)
		}
		if sp, err := stage.SegmentPrefix(c.id, c.seg); c.want != "" && (err != nil || !strings.HasPrefix(c.want, sp) || !strings.HasSuffix(sp, c.seg+"/")) {
			t.Errorf("SegmentPrefix(%q, %q) = %q, %v", c.id, c.seg, sp, err)
		}
	}
	if p, err := stage.TablePrefix("Bad"); p != "" || !errors.Is(err, stage.ErrInvalidStorageID) {
		t.Errorf("TablePrefix(Bad) = %q, %v", p, err)
	}
}

func TestNewSegment(t *testing.T) {
	hex32 := regexp.MustCompile(`^[0-9a-f]{32}$`)
	seen := map[string]bool{}
	for range 1000 {
		s, err := stage.NewSegment()
		if err != nil {
			t.Fatal(err)
		}
		if !hex32.MatchString(s) || stage.CheckSegment(s) != nil {
			t.Fatalf("segment %q", s)
		}
		if seen[s] {
			t.Fatalf("segment %q repeated", s)
		}
		seen[s] = true
	}
}

// The layout's keys are exactly what stores take: relative to the child
// stage, accepted by both backends, listed back under TablePrefix.
func TestLayoutKeysWithStores(t *testing.T) {
	for _, b := range []*stagetest.Backend{stagetest.Local(t), stagetest.S3(t)} {
		t.Run(b.Name, func(t *testing.T) {
			st := b.Open(t, "acme")
			s, err := stage.NewSegment()
			if err != nil {
				t.Fatal(err)
			}
			id := strings.Repeat("z", stage.MaxStorageIDLen)
			var want []string
			for _, n := range []int{0, 1, 1 << 62} {
				key, err := stage.TableFileKey(id, s, n)
				if err != nil {
					t.Fatal(err)
				}
				if _, err := st.Put(t.Context(), key, strings.NewReader("p"), 1); err != nil {
					t.Fatal(err)
				}
				want = append(want, key)
			}
			prefix, _ := stage.TablePrefix(id)
			got, err := st.List(t.Context(), prefix, "", 0)
			if err != nil || len(got) != len(want) {
				t.Fatalf("list %q = %v, %v; want %v", prefix, got, err, want)
			}
			if _, ok := b.RawGet(t, "tenants/acme/"+want[0]); !ok {
				t.Errorf("%s is not at tenants/acme/%s in the stage root", want[0], want[0])
			}
		})
	}
}

// Every key the layout produces is inside the stage on both backends'
// check, under TablePrefix, and unique per (id, segment, part).
func FuzzTableFileKey(f *testing.F) {
	f.Add("t1", seg, 0)
	f.Add("../x", seg, 3)
	f.Add("a-b", "0123456789ABCDEF0123456789abcdef", -1)
	d := stage.Descriptor{Version: 1, S3: &stage.S3Descriptor{Bucket: "b", Prefix: "p/tenants/acme"}}
	f.Fuzz(func(t *testing.T, id, segment string, part int) {
		key, err := stage.TableFileKey(id, segment, part)
		if err != nil {
			if key != "" {
				t.Fatalf("key %q with error %v", key, err)
			}
			return
		}
		if _, err := d.Key(key); err != nil {
			t.Fatalf("TableFileKey(%q, %q, %d) = %q, refused by the store: %v", id, segment, part, key, err)
		}
		prefix, err := stage.TablePrefix(id)
		if err != nil || !strings.HasPrefix(key, prefix) || strings.Count(key, "/") != 3 {
			t.Fatalf("key %q, prefix %q, %v", key, prefix, err)
		}
		if want := prefix + segment + "/part-" + strconv.Itoa(part) + ".parquet"; key != want {
			t.Fatalf("key %q, want %q", key, want)
		}
	})
}
