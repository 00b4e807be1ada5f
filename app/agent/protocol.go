package agent

// The collector protocol's messages, shared by the server (web/agentapi)
// and the collector (Client). JSON over HTTPS under PathPrefix; every call
// but Enrol carries the collector's bearer token. It is not part of the
// public API (/api/v1), whose contract never triggers or records backups.

// PathPrefix is where the server serves the protocol.
const PathPrefix = "/collector/v1/"

// Token schemes: a one-time enrolment token, and the bearer token a
// collector gets for it.
const (
	EnrolmentTokenScheme = "bke_"
	BearerTokenScheme    = "bkc_"
)

// Limits of the protocol.
const (
	// MaxPollWait bounds a long poll.
	MaxPollWait = 25
	// MaxJobsPerPoll bounds the jobs one poll leases.
	MaxJobsPerPoll = 32
	// MaxHeld bounds the jobs a poll may report in hand.
	MaxHeld = 1024
)

// An uploaded result is bounded by what a capture of its job's commands
// can hold (web/agentapi ResultLimit); over it the server answers
// 413 with CodeTooLarge, records nothing, and the job is queued again
// once the collector stops reporting it in hand.

// EnrolRequest spends an enrolment token.
type EnrolRequest struct {
	Token     string `json:"token"`
	Name      string `json:"name"`
	PublicKey string `json:"public_key"`
	Version   string `json:"version"`
}

// EnrolResponse is the collector's identity from now on.
type EnrolResponse struct {
	CollectorID int64  `json:"collector_id"`
	Zone        string `json:"zone"`
	Token       string `json:"token"`
}

// PollRequest is a collector's heartbeat and request for work: the jobs
// it has in hand (their leases are extended; any other lease it holds is
// given back), how many more it takes, and how long it may wait for them.
type PollRequest struct {
	Version     string  `json:"version"`
	Held        []int64 `json:"held"`
	Free        int     `json:"free"`
	WaitSeconds int     `json:"wait_seconds"`
}

// PollResponse hands out jobs and tells which jobs in hand to stop.
type PollResponse struct {
	Jobs []Job `json:"jobs"`
	// Cancel lists jobs in hand an operator cancelled.
	Cancel []int64 `json:"cancel"`
	// Lost lists jobs in hand the collector no longer holds.
	Lost []int64 `json:"lost"`
	// LeaseSeconds is how long a job stays leased without a poll.
	LeaseSeconds int `json:"lease_seconds"`
}

// Job is one device to collect from, for one attempt.
type Job struct {
	ID      int64  `json:"id"`
	Attempt string `json:"attempt"`
	// Device names the device for the collector's log.
	DeviceID   int64    `json:"device_id"`
	DeviceName string   `json:"device_name"`
	Platform   string   `json:"platform"`
	Host       string   `json:"host"`
	Port       int      `json:"port"`
	Method     string   `json:"method"`
	Encoding   string   `json:"encoding"`
	Commands   []string `json:"commands,omitempty"`
	// PinnedHostKey is the SSH host key pinned for the device (wire
	// format); empty: trust on first use.
	PinnedHostKey []byte `json:"pinned_host_key,omitempty"`
	// Definition is a custom platform's definition (JSON), which the
	// collector does not otherwise know.
	Definition string `json:"definition,omitempty"`
	// Secrets are the credential's secrets sealed to the collector for
	// this attempt (SealSecrets).
	Secrets []byte `json:"secrets"`
	// TimeoutSeconds bounds the whole collection.
	TimeoutSeconds int `json:"timeout_seconds"`
	// OutboundAllow is the server's outbound allow list (IP addresses and
	// CIDR prefixes): the link-local and cloud metadata addresses the
	// collector may still connect to. Any other such address is refused
	// before connecting, after DNS.
	OutboundAllow []string `json:"outbound_allow,omitempty"`
}

// ResultRequest is what a collection produced (backup.Capture).
type ResultRequest struct {
	Attempt    string `json:"attempt"`
	Text       string `json:"text,omitempty"`
	HostKey    []byte `json:"host_key,omitempty"`
	Reason     string `json:"reason,omitempty"`
	Error      string `json:"error,omitempty"`
	DurationMS int64  `json:"duration_ms"`
}

// ErrorResponse is the body of a refused call.
type ErrorResponse struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

// Error codes of the protocol.
const (
	CodeUnauthorized = "UNAUTHORIZED"
	CodeEnrolment    = "ENROLMENT_REFUSED"
	CodeBadRequest   = "BAD_REQUEST"
	CodeLeaseLost    = "LEASE_LOST"
	CodeTooLarge     = "PAYLOAD_TOO_LARGE"
	CodeInternal     = "INTERNAL_ERROR"
)
