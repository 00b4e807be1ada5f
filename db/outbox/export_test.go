package outbox

// ClaimPicks lets the tests check the plans of ClaimDeliveries.
var ClaimPicks = claimPicks
