package account

import (
	"net/http"

	"backupd/app/auth"
	"backupd/web/ui/core"
)

// sessionInfo is GET /api/session: who is signed in and what they may do.
type sessionInfo struct {
	Username           string   `json:"username"`
	Permissions        []string `json:"permissions"`
	AllGroups          bool     `json:"all_groups"`
	GroupIDs           []int64  `json:"group_ids"`
	Language           string   `json:"language"`
	MustChangePassword bool     `json:"must_change_password"`
}

func (u *handlers) apiSession(w http.ResponseWriter, r *http.Request) error {
	s := core.SessionOf(r)
	p := s.Principal()
	info := sessionInfo{
		Username: s.Username, Permissions: []string{}, AllGroups: p.AllGroups,
		GroupIDs: append([]int64{}, p.GroupIDs...), Language: core.LangOf(r),
		MustChangePassword: s.MustChangePassword,
	}
	for _, perm := range auth.Permissions {
		if s.Can(perm) {
			info.Permissions = append(info.Permissions, perm)
		}
	}
	return core.WriteJSON(w, http.StatusOK, info)
}

// apiLogout is DELETE /api/session: sign out from script.
func (u *handlers) apiLogout(w http.ResponseWriter, r *http.Request) error {
	if err := u.EndSession(w, r); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}
