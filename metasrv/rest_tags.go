package metasrv

import (
	"fmt"
	"slices"

	"lakegate/catalog"
	"lakegate/metasrv/api"
)

func toTag(t catalog.TagInfo) api.TagDTO {
	d := api.TagDTO{Name: t.Name, Comment: t.Comment, Properties: t.Properties}
	if t.AllowedValues != nil {
		av := append([]string{}, t.AllowedValues...)
		d.AllowedValues = &av
	}
	a := t.Audit
	d.Audit = &a
	return d
}

func toObjects(os []catalog.Object) []api.ObjectDTO {
	out := []api.ObjectDTO{}
	for _, o := range os {
		out = append(out, api.ObjectDTO{FullName: o.Name, Type: lower(o.Type)})
	}
	return out
}

// parseObject parses the {type}/{fullName} path segments. A metalake's
// full name must be the addressed metalake.
func parseObject(rq *request) (catalog.Object, error) {
	t, err := catalog.ParseObjectType(rq.param("type"))
	if err != nil {
		return catalog.Object{}, badRequest("unknown object type")
	}
	o := catalog.Object{Type: t, Name: rq.param("fullName")}
	if t == catalog.ObjectMetalake && o.Name != rq.metalake {
		return o, fmt.Errorf("%w: %s", ErrNotFound, o)
	}
	if t == catalog.ObjectUser || t == catalog.ObjectGroup {
		return o, badRequest("%s is not a metadata object type here", lower(t))
	}
	return o, nil
}

// directTagNames returns the sorted, unique names of the tags assigned to o
// itself.
func directTagNames(s *catalog.Snapshot, o catalog.Object) []string {
	info, _ := s.Object(o)
	names := []string{}
	for _, tv := range info.Tags {
		names = append(names, tv.Name)
	}
	return slices.Compact(names)
}

func (s *Server) tagRoutes() {
	const base = "/api/metalakes/{tenant}"
	s.read(base+"/tags", "ListTags", s.listTags)
	s.write("POST", base+"/tags", "CreateTag", s.createTag)
	s.read(base+"/tags/{tag}", "GetTag", s.getTag)
	s.write("PUT", base+"/tags/{tag}", "AlterTag", s.alterTag)
	s.write("DELETE", base+"/tags/{tag}", "DropTag", s.dropTag)
	s.read(base+"/tags/{tag}/objects", "ListObjectsForTag", s.listObjectsForTag)
	s.read(base+"/objects/{type}/{fullName}/tags", "ListTagsForObject", s.listTagsForObject)
	s.write("POST", base+"/objects/{type}/{fullName}/tags", "AssociateTags", s.associateTags)
}

func tagListResponse(ts []api.TagDTO) any { return api.TagListResponse{Tags: ts} }

func renderTag(name string) func(*Result) (any, error) {
	return func(res *Result) (any, error) {
		t, ok := res.Lake.Snapshot.Tag(name)
		if !ok {
			return nil, fmt.Errorf("metasrv: tag %q missing after apply", name)
		}
		return api.TagResponse{Tag: toTag(t)}, nil
	}
}

// listTags serves GET …/tags.
func (s *Server) listTags(rq *request, l *Metalake) (any, error) {
	tags := l.Snapshot.ViewTags(rq.actor())
	return namesOr(rq, tags, func(t catalog.TagInfo) string { return t.Name },
		func(t catalog.TagInfo) (api.TagDTO, bool) { return toTag(t), true }, tagListResponse), nil
}

// createTag serves POST …/tags.
func (s *Server) createTag(rq *request, l *Metalake) (*plan, error) {
	var b api.CreateTagRequest
	if err := rq.decode(&b); err != nil {
		return nil, err
	}
	if err := catalog.CheckEntityName(b.Name); err != nil {
		return nil, err
	}
	c := catalog.CreateTag{Name: b.Name, Comment: b.Comment, Properties: b.Properties}
	if b.AllowedValues != nil {
		c.AllowedValues = append([]string{}, *b.AllowedValues...)
	}
	return &plan{cmds: []catalog.Command{c}, render: renderTag(b.Name)}, nil
}

// getTag serves GET …/tags/{tag}.
func (s *Server) getTag(rq *request, l *Metalake) (any, error) {
	t, err := l.Snapshot.ViewTag(rq.actor(), rq.param("tag"))
	if err != nil {
		return nil, err
	}
	return api.TagResponse{Tag: toTag(t)}, nil
}

// alterTag serves PUT …/tags/{tag}.
func (s *Server) alterTag(rq *request, l *Metalake) (*plan, error) {
	updates, err := updatesOf[Update](rq)
	if err != nil {
		return nil, err
	}
	name := rq.param("tag")
	c := catalog.AlterTag{Name: name}
	for _, u := range updates {
		switch u.Type {
		case "rename", "updateComment", "setProperty", "removeProperty":
		default:
			return nil, badRequest("unknown tag update %q", u.Type)
		}
		c.Updates = append(c.Updates, catalog.TagUpdate{Type: u.Type, NewName: u.NewName, NewComment: u.NewComment, Property: u.Property, Value: u.Value})
		if u.Type == "rename" {
			name = u.NewName
		}
	}
	return &plan{cmds: []catalog.Command{c}, render: renderTag(name)}, nil
}

// dropTag serves DELETE …/tags/{tag}.
func (s *Server) dropTag(rq *request, l *Metalake) (*plan, error) {
	name := rq.param("tag")
	return dropPlan(l.Snapshot.Visible(rq.actor(), catalog.Tag(name)), catalog.DropTag{Name: name}), nil
}

// listObjectsForTag serves GET …/tags/{tag}/objects.
func (s *Server) listObjectsForTag(rq *request, l *Metalake) (any, error) {
	objs, err := l.Snapshot.ViewObjectsWithTag(rq.actor(), rq.param("tag"), rq.query("value"))
	if err != nil {
		return nil, err
	}
	return api.MetadataObjectListResponse{MetadataObjects: toObjects(objs)}, nil
}

// listTagsForObject serves GET …/objects/{type}/{fullName}/tags.
func (s *Server) listTagsForObject(rq *request, l *Metalake) (any, error) {
	o, err := parseObject(rq)
	if err != nil {
		return nil, err
	}
	tags, err := l.Snapshot.ViewEffectiveTags(rq.actor(), o)
	if err != nil {
		return nil, err
	}
	return namesOr(rq, tags, func(et catalog.EffectiveTag) string { return et.Name },
		func(et catalog.EffectiveTag) (api.TagDTO, bool) {
			t, _ := l.Snapshot.Tag(et.Name)
			d := toTag(t)
			inh := et.Inherited
			vals := append([]string{}, et.Values...)
			d.Inherited, d.AssignmentValues = &inh, &vals
			return d, true
		}, tagListResponse), nil
}

// associateTags serves POST …/objects/{type}/{fullName}/tags.
func (s *Server) associateTags(rq *request, l *Metalake) (*plan, error) {
	o, err := parseObject(rq)
	if err != nil {
		return nil, err
	}
	var cmd catalog.Command
	switch mt := mediaType(rq.r); mt {
	case api.MediaV2:
		var b api.AssociateTagsV2Request
		if err := rq.decode(&b); err != nil {
			return nil, err
		}
		cmd = catalog.AssociateTagsV2{Object: o, TagsToAdd: b.TagsToAdd, TagsToRemove: b.TagsToRemove}
	case api.MediaJSON, api.MediaV1, "":
		var b api.AssociateTagsRequest
		if err := rq.decode(&b); err != nil {
			return nil, err
		}
		cmd = catalog.AssociateTagsV1{Object: o, TagsToAdd: b.TagsToAdd, TagsToRemove: b.TagsToRemove}
	default:
		return nil, badRequest("unsupported content type %q", mt)
	}
	return &plan{cmds: []catalog.Command{cmd}, render: func(res *Result) (any, error) {
		return api.NameListResponse{Names: directTagNames(res.Lake.Snapshot, o)}, nil
	}}, nil
}
