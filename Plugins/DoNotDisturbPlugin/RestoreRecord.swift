@_spi(GrowBuiltIn) import GrowPluginKit

// The record and its file live in the kit (DoNotDisturbRestore.swift): `grow dnd restore` and
// the daemon's start read the same file, outside this plugin's life.

/// What Grow changed on the notification server, kept on disk while it is changed.
typealias RestoreRecord = DoNotDisturbRestoreRecord

/// `$XDG_STATE_HOME/grow/dnd-restore.json`, mode 0600, replaced atomically.
typealias RestoreFile = DoNotDisturbRestoreFile
