// The static daemon image (DaemonImage in GrowDaemon): the daemon with the built-in plugins of
// `linkedIntoDaemonImage` (Package.swift) registered by their types instead of opened with
// dlopen. Built with GROW_DAEMON_IMAGE=static by scripts/build-daemon-image; `grow daemon`
// runs it.
import BrowserPlugin
import DoNotDisturbPlugin
import Glibc
import GnomePomodoroPlugin
import GrowDaemon
import GrowPluginKit
import NotifyPlugin
import SoundPlugin
import StatusBarPlugin
import TrayPlugin
import WaylandPlugin
import X11Plugin

let linkedIn: [any GrowPlugin.Type] = [
  NotifyPlugin.self, DoNotDisturbPlugin.self, X11Plugin.self, WaylandPlugin.self,
  StatusBarPlugin.self, SoundPlugin.self, TrayPlugin.self, GnomePomodoroPlugin.self,
  BrowserPlugin.self,
]
exit(
  MainActor.assumeIsolated {
    runLinkedInDaemon(Array(CommandLine.arguments.dropFirst()), linkedIn: linkedIn)
  })
