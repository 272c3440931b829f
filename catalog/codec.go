package catalog

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
)

// commandVersion is the envelope version written by EncodeCommand.
const commandVersion = 1

type envelope struct {
	V    int             `json:"v"`
	Type CommandType     `json:"type"`
	Body json.RawMessage `json:"body"`
}

// EncodeCommand serializes cmd as {"v":1,"type":<number>,"body":{…}}. The
// bytes are deterministic for a given command value.
func EncodeCommand(cmd Command) ([]byte, error) {
	if cmd == nil {
		return nil, errf(ErrInvalidCommand, "nil command")
	}
	body, err := json.Marshal(cmd)
	if err != nil {
		return nil, errf(ErrInvalidCommand, err.Error())
	}
	return json.Marshal(envelope{V: commandVersion, Type: cmd.commandType(), Body: body})
}

// DecodeCommand parses bytes written by EncodeCommand. Unknown versions,
// types and fields, and trailing data, are rejected with an error wrapping
// ErrInvalidCommand. Content rules are checked by Apply, not here.
func DecodeCommand(b []byte) (Command, error) {
	var env envelope
	if err := strict(b, &env); err != nil {
		return nil, errf(ErrInvalidCommand, "envelope: "+err.Error())
	}
	if env.V != commandVersion {
		return nil, errf(ErrInvalidCommand, "unsupported version "+itoa(uint64(max(env.V, 0))))
	}
	if len(env.Body) == 0 || string(env.Body) == "null" {
		return nil, errf(ErrInvalidCommand, "missing body")
	}
	switch env.Type {
	case TypeCreateCatalog:
		return decodeBody[CreateCatalog](env.Body)
	case TypeCreateSchema:
		return decodeBody[CreateSchema](env.Body)
	case TypeCreateTable:
		return decodeBody[CreateTable](env.Body)
	case TypeDropObject:
		return decodeBody[DropObject](env.Body)
	case TypeRenameObject:
		return decodeBody[RenameObject](env.Body)
	case TypeAddColumn:
		return decodeBody[AddColumn](env.Body)
	case TypeSetOwner:
		return decodeBody[SetOwner](env.Body)
	case TypeCreateUser:
		return decodeBody[CreateUser](env.Body)
	case TypeDropUser:
		return decodeBody[DropUser](env.Body)
	case TypeCreateGroup:
		return decodeBody[CreateGroup](env.Body)
	case TypeDropGroup:
		return decodeBody[DropGroup](env.Body)
	case TypeAddGroupMembers:
		return decodeBody[AddGroupMembers](env.Body)
	case TypeRemoveGroupMembers:
		return decodeBody[RemoveGroupMembers](env.Body)
	case TypeCreateRole:
		return decodeBody[CreateRole](env.Body)
	case TypeDropRole:
		return decodeBody[DropRole](env.Body)
	case TypeGrantPrivileges:
		return decodeBody[GrantPrivileges](env.Body)
	case TypeRevokePrivileges:
		return decodeBody[RevokePrivileges](env.Body)
	case TypeGrantRoles:
		return decodeBody[GrantRoles](env.Body)
	case TypeRevokeRoles:
		return decodeBody[RevokeRoles](env.Body)
	case TypeCreateTag:
		return decodeBody[CreateTag](env.Body)
	case TypeAlterTag:
		return decodeBody[AlterTag](env.Body)
	case TypeDropTag:
		return decodeBody[DropTag](env.Body)
	case TypeAssociateTagsV1:
		return decodeBody[AssociateTagsV1](env.Body)
	case TypeAssociateTagsV2:
		return decodeBody[AssociateTagsV2](env.Body)
	case TypeCreatePolicy:
		return decodeBody[CreatePolicy](env.Body)
	case TypeAlterPolicy:
		return decodeBody[AlterPolicy](env.Body)
	case TypeEnablePolicy:
		return decodeBody[EnablePolicy](env.Body)
	case TypeDisablePolicy:
		return decodeBody[DisablePolicy](env.Body)
	case TypeDropPolicy:
		return decodeBody[DropPolicy](env.Body)
	case TypeAttachPolicy:
		return decodeBody[AttachPolicy](env.Body)
	case TypeDetachPolicy:
		return decodeBody[DetachPolicy](env.Body)
	}
	return nil, errf(ErrInvalidCommand, "unknown command type "+itoa(uint64(env.Type)))
}

func decodeBody[T Command](b []byte) (Command, error) {
	var c T
	if err := strict(b, &c); err != nil {
		return nil, errf(ErrInvalidCommand, c.Op()+": "+err.Error())
	}
	return c, nil
}

// strict decodes exactly one JSON value into v, rejecting unknown fields and
// trailing data.
func strict(b []byte, v any) error {
	d := json.NewDecoder(bytes.NewReader(b))
	d.DisallowUnknownFields()
	if err := d.Decode(v); err != nil {
		return err
	}
	if _, err := d.Token(); !errors.Is(err, io.EOF) {
		return errors.New("trailing data")
	}
	return nil
}
