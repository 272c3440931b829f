package flight

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"

	"lakegate/flight/backend"
)

// govCatalog is a backend.Catalog that behaves as metasrv does where the
// gateway's decisions depend on it: List returns schemas AND tables (every
// one the catalog grants, whatever the gateway's namespace grants), every
// governance change moves the tenant's generation, and Resolve stamps each
// version with the generation it was decided at. It ignores the caller: the
// grants are the same for everyone, so what the gateway adds on top (the
// principal's namespaces) is what a test observes.
type govCatalog struct {
	mu       sync.Mutex
	gen      uint64
	tables   map[backend.TableName]backend.TableVersion // granted tables
	schemas  []string                                   // extra schemas with no granted table
	resolves int
}

// newGovCatalog returns a catalog at generation 1 granting every table in
// names ("schema.table"), each at version 1.
func newGovCatalog(names ...string) *govCatalog {
	c := &govCatalog{gen: 1, tables: map[backend.TableName]backend.TableVersion{}}
	for _, n := range names {
		sc, tb, _ := strings.Cut(n, ".")
		name := backend.TableName{Schema: sc, Name: tb}
		c.tables[name] = backend.TableVersion{Name: name, StorageID: "st-" + sc + "-" + tb, Version: 1,
			Columns: []backend.Column{{Name: "id", Type: "BIGINT"}}}
	}
	return c
}

// change applies f to the grants (under the lock) and moves the generation,
// as any metasrv write does.
func (c *govCatalog) change(f func(tables map[backend.TableName]backend.TableVersion)) {
	c.mu.Lock()
	defer c.mu.Unlock()
	f(c.tables)
	c.gen++
}

// revoke withdraws the grant on table "schema.name".
func (c *govCatalog) revoke(table string) {
	sc, tb, _ := strings.Cut(table, ".")
	c.change(func(m map[backend.TableName]backend.TableVersion) { delete(m, backend.TableName{Schema: sc, Name: tb}) })
}

// setFilter sets the row filter applying to table "schema.name".
func (c *govCatalog) setFilter(table, filter string) {
	sc, tb, _ := strings.Cut(table, ".")
	c.change(func(m map[backend.TableName]backend.TableVersion) {
		n := backend.TableName{Schema: sc, Name: tb}
		v := m[n]
		v.Policy = &backend.TablePolicy{RowFilter: filter}
		m[n] = v
	})
}

// touch moves the generation without changing any grant (a change
// elsewhere in the tenant).
func (c *govCatalog) touch() { c.change(func(map[backend.TableName]backend.TableVersion) {}) }

// commit makes a new version of table "schema.name".
func (c *govCatalog) commit(table string) {
	sc, tb, _ := strings.Cut(table, ".")
	c.change(func(m map[backend.TableName]backend.TableVersion) {
		n := backend.TableName{Schema: sc, Name: tb}
		v := m[n]
		v.Version++
		m[n] = v
	})
}

func (c *govCatalog) List(context.Context, backend.Caller) (backend.Listing, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	l := backend.Listing{Schemas: slices.Clone(c.schemas)}
	for n, v := range c.tables {
		if !slices.Contains(l.Schemas, n.Schema) {
			l.Schemas = append(l.Schemas, n.Schema)
		}
		v.Generation = c.gen
		l.Tables = append(l.Tables, v)
	}
	slices.Sort(l.Schemas)
	slices.SortFunc(l.Tables, func(a, b backend.TableVersion) int {
		return strings.Compare(a.Name.Schema+"."+a.Name.Name, b.Name.Schema+"."+b.Name.Name)
	})
	return l, nil
}

func (c *govCatalog) Resolve(_ context.Context, _ backend.Caller, refs []backend.TableRef) ([]*backend.TableVersion, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.resolves++
	out := make([]*backend.TableVersion, len(refs))
	for i, r := range refs {
		v, ok := c.tables[r.Name]
		// Every older version is retained, as within RetainedVersions.
		if !ok || r.Version > v.Version {
			continue
		}
		if r.Version != 0 {
			v.Version = r.Version
		}
		v.Generation = c.gen
		out[i] = &v
	}
	return out, nil
}

func (c *govCatalog) Generation(context.Context, string) (uint64, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.gen, nil
}

func (c *govCatalog) resolveCalls() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.resolves
}

func (c *govCatalog) Commit(context.Context, backend.Caller, backend.Commit) (uint64, error) {
	return 0, errors.New("govCatalog: not used")
}

func (c *govCatalog) Drop(context.Context, backend.Caller, backend.TableName) (bool, error) {
	return false, errors.New("govCatalog: not used")
}
