package apiv1

import (
	"reflect"

	"github.com/danielgtaylor/huma/v2"
)

// namedExamples are several examples of one body, each with a summary.
type namedExamples map[string]*huma.Example

func ptr[T any](v T) *T { return &v }

// Examples of the documented bodies. TestOpenAPIExamplesValid checks each
// against its schema, so they cannot drift from the types.
var (
	exampleGroup = Group{ID: 7, Name: "Core switches", ParentID: ptr(int64(3)), Path: "/3/7/", Depth: 1, SortOrder: 0, CreatedAt: "2026-03-14T09:26:53"}
	exampleRoot  = Group{ID: 3, Name: "Data centre", Path: "/3/", Depth: 0, SortOrder: 0, CreatedAt: "2026-03-14T09:20:11"}

	exampleCredential = Credential{ID: 4, Name: "Core switches (TACACS)", Username: "backup", Remarks: ptr("Read-only account on the TACACS server."), CreatedAt: "2026-03-14T09:31:02"}

	exampleTemplate = Template{ID: 2, Name: "Cisco IOS running config", Platform: "cisco_ios",
		Commands: "terminal length 0\nshow running-config", CreatedAt: "2026-03-14T09:35:40"}

	exampleDevice = Device{ID: 12, Name: "core-sw-01", Host: "10.0.0.2", Port: 22, Platform: "cisco_ios", LoginMethod: "ssh",
		GroupID: ptr(int64(7)), CredentialID: ptr(int64(4)), TemplateID: ptr(int64(2)), Encoding: "utf-8", Enabled: true,
		Remarks: ptr("Rack B4"), Status: "reachable", LastCheckedAt: ptr("2026-03-15T02:00:04"),
		LastBackupAt: ptr("2026-03-15T02:00:05"), LastBackupSuccess: ptr(true), LastChangedAt: ptr("2026-03-12T02:00:03"),
		CreatedAt: "2026-03-14T09:40:17", UpdatedAt: "2026-03-15T02:00:09"}

	exampleBackups = []Backup{
		{ID: "0b7e4c2a-5d1f-4a8e-b3c6-9f2d1e8a7b40", StartedAt: "2026-03-15T10:00:05", FinishedAt: ptr("2026-03-15T10:00:09"),
			Success: true, ConfigSnapshotHash: ptr("5d41402abc4b2a76b9719d911017c592ae2f3c1b6f0e6a1c9c2d3b4a5f6e7d8c")},
		{ID: "8c1a9e3f-2b4d-4f6a-8e0c-7d5b3a1f9e26", StartedAt: "2026-03-14T10:00:04", FinishedAt: ptr("2026-03-14T10:00:34"),
			Success: false, ErrorMessage: ptr("connect to 10.0.0.2:22: i/o timeout")},
	}
)

// bodyExamples are the examples of request and response bodies, by type.
var bodyExamples = map[reflect.Type]any{
	reflect.TypeFor[Group]():       exampleGroup,
	reflect.TypeFor[Page[Group]](): paginate([]Group{exampleRoot, exampleGroup}, 1, 50, 2),
	reflect.TypeFor[[]GroupNode](): []GroupNode{{Group: exampleRoot, Children: []GroupNode{{Group: exampleGroup, Children: []GroupNode{}}}}},
	reflect.TypeFor[GroupCreate](): map[string]any{"name": "Core switches", "parent_id": 3},
	reflect.TypeFor[GroupUpdate](): namedExamples{
		"rename": {Summary: "Rename, keeping the parent",
			Description: "parent_id is sent with its current value: an absent parent_id would move the group to the root level.",
			Value:       map[string]any{"name": "Core switches (DC1)", "parent_id": 3}},
		"move-to-root": {Summary: "Move to the root level", Value: map[string]any{"parent_id": nil}},
	},

	reflect.TypeFor[Credential]():       exampleCredential,
	reflect.TypeFor[Page[Credential]](): paginate([]Credential{exampleCredential}, 1, 50, 1),
	reflect.TypeFor[CredentialCreate](): map[string]any{"name": "Core switches (TACACS)", "username": "backup",
		"password": "s3cret-Passw0rd", "enable_password": "3nable-s3cret", "remarks": "Read-only account on the TACACS server."},
	reflect.TypeFor[CredentialUpdate](): namedExamples{
		"clear-enable-password": {Summary: "Clear the enable password",
			Description: "An explicit null clears the stored enable password; every field not sent keeps its stored value.",
			Value:       map[string]any{"enable_password": nil}},
		"change-password": {Summary: "Change the password only",
			Value: map[string]any{"password": "n3w-s3cret-Passw0rd"}},
	},

	reflect.TypeFor[Template]():       exampleTemplate,
	reflect.TypeFor[Page[Template]](): paginate([]Template{exampleTemplate}, 1, 50, 1),
	reflect.TypeFor[TemplateCreate](): map[string]any{"name": "Cisco IOS running config", "platform": "cisco_ios",
		"commands": "terminal length 0\nshow running-config"},
	reflect.TypeFor[TemplateUpdate](): namedExamples{
		"rename": {Summary: "Rename only", Value: map[string]any{"name": "Cisco IOS running config (short)"}},
		"default-commands": {Summary: "Go back to the platform's default commands",
			Value: map[string]any{"commands": ""}},
	},

	reflect.TypeFor[Device]():       exampleDevice,
	reflect.TypeFor[Page[Device]](): paginate([]Device{exampleDevice}, 1, 50, 1),
	reflect.TypeFor[DeviceCreate](): map[string]any{"name": "core-sw-01", "host": "10.0.0.2", "platform": "cisco_ios",
		"login_method": "ssh", "group_id": 7, "credential_id": 4, "template_id": 2, "remarks": "Rack B4"},
	reflect.TypeFor[DeviceUpdate](): namedExamples{
		"change-host": {Summary: "Change the host only", Value: map[string]any{"host": "10.0.1.2"}},
		"default-commands": {Summary: "Use the platform's default commands",
			Description: "An explicit null clears template_id; every field not sent keeps its stored value.",
			Value:       map[string]any{"template_id": nil}},
	},

	reflect.TypeFor[Page[Backup]]():  paginate(exampleBackups, 1, 10, 2),
	reflect.TypeFor[BackupContent](): BackupContent{ConfigText: ptr("hostname core-sw-01\n!\ninterface GigabitEthernet0/1\n description uplink\n!\nend\n")},

	reflect.TypeFor[Stats](): Stats{
		Devices: DeviceCounts{Total: 120, Enabled: 118, Disabled: 2, Reachable: 115, Unreachable: 3, Unknown: 2},
		Groups:  9, Credentials: 4, Templates: 6,
		Backups: BackupCounts{Total: 8640, Succeeded: 8601, Failed: 39,
			Last24h:      RecentBackups{Total: 118, Succeeded: 115, Failed: 3, Changed: 5},
			LastBackupAt: ptr("2026-03-15T02:00:05")},
		Storage: StorageCounts{Snapshots: 412, RawBytes: 9437184, StoredBytes: 1835008},
	},

	reflect.TypeFor[StatusBody](): StatusBody{Status: "success"},
}
