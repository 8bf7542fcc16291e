// libcanberra (the freedesktop event-sound library) for Swift, from libcanberra's pkg-config.
// Only the sound plugin's thin wrapper (Plugins/SoundPlugin/Canberra.swift) imports this module.
#include <canberra.h>
