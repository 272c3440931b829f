package metasrv

import (
	"fmt"
	"strings"

	"lakegate/catalog"
	"lakegate/metasrv/api"
)

// Table versions over REST (lakegate extension of Gravitino's table API):
//
//	POST /api/metalakes/{m}/catalogs/{c}/schemas/{s}/tables/{t}/versions
//	GET  /api/metalakes/{m}/catalogs/{c}/schemas/{s}/tables/{t}/versions
//
// A commit is catalog.CommitTableVersion applied as the caller (delegation
// and forwarding work as for every REST write), at catalog.CurrentRules; a
// stale base is rejected with catalog.ErrVersionConflict (409 / 1012). Only
// a gateway registers files (checkDataFrom): anyone else's commit naming
// files is refused (400). The listing answers the retained versions, newest
// first, to callers that may see the table. A table of an upstream catalog
// holds no data in lakegate: commits to it are refused (400).

func toDataFiles(in []api.DataFile) []catalog.DataFile {
	if in == nil {
		return nil
	}
	out := make([]catalog.DataFile, len(in))
	for i, f := range in {
		out[i] = catalog.DataFile{Path: f.Path, Size: f.Size, Rows: f.Rows, SHA256: f.SHA256}
	}
	return out
}

func fromDataFiles(in []catalog.DataFile) []api.DataFile {
	out := make([]api.DataFile, len(in))
	for i, f := range in {
		out[i] = api.DataFile{Path: f.Path, Size: f.Size, Rows: f.Rows, SHA256: f.SHA256}
	}
	return out
}

func toColumnDTOs(in []catalog.ColumnDef) []api.ColumnDTO {
	out := make([]api.ColumnDTO, len(in))
	for i, c := range in {
		n := c.Nullable
		out[i] = api.ColumnDTO{Name: c.Name, Type: c.Type, Comment: c.Comment, Nullable: &n}
	}
	return out
}

func toVersion(v catalog.TableVersionInfo) api.VersionDTO {
	return api.VersionDTO{Version: v.Version, Rows: v.Rows, Files: fromDataFiles(v.Files),
		Columns: toColumnDTOs(v.Columns), Actor: v.Actor, Time: v.Time.UTC()}
}

// tableVersion returns the storage id and current version of table (full
// name) in snap; zero values for a table without versions.
func tableVersion(snap *catalog.Snapshot, table string) (string, uint64) {
	sid, v, ok := snap.TableVersion(table, 0)
	if !ok {
		return "", 0
	}
	return sid, v.Version
}

// tableOf is the table the path of rq names.
func tableOf(rq *request) catalog.Object {
	return catalog.Table(rq.param("catalog") + "." + rq.param("schema") + "." + rq.param("table"))
}

// versionRoutes registers the table version endpoints.
func (s *Server) versionRoutes() {
	const item = "/api/metalakes/{tenant}/catalogs/{catalog}/schemas/{schema}/tables/{table}/versions"
	s.read(item, "ListTableVersions", s.listTableVersions)
	s.write("POST", item, "CommitTableVersion", s.commitTableVersion)
}

// listTableVersions serves GET …/tables/{table}/versions.
func (s *Server) listTableVersions(rq *request, l *Metalake) (any, error) {
	o := tableOf(rq)
	if _, err := visibleObject(rq, l.Snapshot, o); err != nil {
		return nil, err
	}
	out := []api.VersionDTO{}
	if _, vs, ok := l.Snapshot.TableVersions(o.Name); ok {
		for _, v := range vs {
			out = append(out, toVersion(v))
		}
	}
	return api.VersionListResponse{Versions: out}, nil
}

// commitTableVersion serves POST …/tables/{table}/versions.
func (s *Server) commitTableVersion(rq *request, l *Metalake) (*plan, error) {
	var b api.CommitVersionRequest
	if err := rq.decode(&b); err != nil {
		return nil, err
	}
	if b.Base == nil {
		return nil, badRequest("base is required")
	}
	o := tableOf(rq)
	if strings.EqualFold(rq.param("schema"), catalog.SystemSchema) {
		return nil, errSystemReadOnly // only the access log's own commit writes there
	}
	for _, part := range []string{"catalog", "schema", "table"} {
		if err := catalog.CheckNamePart(rq.param(part)); err != nil {
			return nil, err
		}
	}
	if _, up := upstreamCatalog(rq, snapOf(l), rq.param("catalog")); up {
		return nil, badRequest(errUpstreamNoData)
	}
	if len(b.Files) > 0 {
		if err := checkDataFrom(rq); err != nil {
			return nil, err
		}
	}
	cmd := catalog.CommitTableVersion{Table: o.Name, Base: *b.Base, Replace: b.Replace, Files: toDataFiles(b.Files)}
	for _, c := range b.Columns {
		cmd.Columns = append(cmd.Columns, colDef(c))
	}
	return &plan{cmds: withRules(snapOf(l), []catalog.Command{cmd}), render: func(res *Result) (any, error) {
		_, v, ok := res.Lake.Snapshot.TableVersion(o.Name, 0)
		if !ok {
			return nil, fmt.Errorf("metasrv: %s has no version after a commit", o)
		}
		return api.CommitVersionResponse{Version: v.Version, Generation: res.Generation()}, nil
	}}, nil
}
