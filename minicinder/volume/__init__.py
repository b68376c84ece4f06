"""The volume domain: states, the API-side rules, the manager and drivers."""
