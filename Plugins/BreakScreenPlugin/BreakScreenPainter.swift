import CBreakScreen
import FoundationEssentials

/// A rectangle in a monitor's pixels.
struct ScreenRect: Equatable, Sendable {
  var x: Int
  var y: Int
  var width: Int
  var height: Int

  func contains(x px: Int, y py: Int) -> Bool {
    px >= x && px < x + width && py >= y && py < y + height
  }
}

/// One monitor's frame, drawn by cairo and pango into client memory (32-bit xRGB, cairo's
/// RGB24: X11's 24-bit TrueColor and wl_shm's XRGB8888 alike) for the display to send. Everything that touches cairo or pango is in here.
@MainActor
final class BreakScreenFrame {
  let width: Int
  let height: Int
  /// Bytes per row.
  let stride: Int
  /// Where each button was drawn, for clicks.
  private(set) var buttons: [(button: BreakScreenButton, rect: ScreenRect)] = []
  /// The rows the clock is drawn in: all that changes from one second to the next.
  private(set) var clockRows: Range<Int> = 0..<0
  /// The System V shared-memory segment the pixels are in (MIT-SHM), with `.systemV`.
  let sharedMemoryID: Int32?
  /// The memory file the pixels are in (a Wayland compositor's wl_shm pool), with `.file`.
  let fileDescriptor: Int32?
  /// The pixels' size in bytes.
  var byteCount: Int { stride * height }
  private let surface: OpaquePointer
  private let sharedPixels: UnsafeMutableRawPointer?

  /// Where a frame's pixels live.
  enum Memory {
    /// The process's own memory: sent whole (an X server without MIT-SHM).
    case process
    /// A System V segment the X server attaches (MIT-SHM).
    case systemV
    /// A memfd the Wayland compositor maps (wl_shm).
    case file
  }

  /// In `memory`; a segment that cannot be made falls back to the process's own memory, a
  /// file that cannot is no frame.
  init?(width: Int, height: Int, memory: Memory) {
    guard width > 0, height > 0, width < 32768, height < 32768 else { return nil }
    let stride = Int(cairo_format_stride_for_width(CAIRO_FORMAT_RGB24, Int32(width)))
    var address: UnsafeMutableRawPointer?
    var id: Int32 = -1
    var fd: Int32 = -1
    switch memory {
    case .process: break
    case .systemV: id = grow_bs_shm_create(stride * height, &address)
    case .file:
      fd = grow_bs_memfd_create(stride * height, &address)
      guard fd >= 0 else { return nil }
    }
    let surface =
      if id >= 0 || fd >= 0, let address {
        cairo_image_surface_create_for_data(
          address.assumingMemoryBound(to: UInt8.self), CAIRO_FORMAT_RGB24, Int32(width),
          Int32(height), Int32(stride))
      } else {
        cairo_image_surface_create(CAIRO_FORMAT_RGB24, Int32(width), Int32(height))
      }
    guard let surface, cairo_surface_status(surface) == CAIRO_STATUS_SUCCESS else {
      if let surface { cairo_surface_destroy(surface) }
      if id >= 0, let address { grow_bs_shm_unmap(address) }
      if fd >= 0, let address { grow_bs_memfd_unmap(address, stride * height, fd) }
      return nil
    }
    self.width = width
    self.height = height
    self.surface = surface
    self.stride = Int(cairo_image_surface_get_stride(surface))
    sharedMemoryID = id >= 0 ? id : nil
    fileDescriptor = fd >= 0 ? fd : nil
    sharedPixels = id >= 0 || fd >= 0 ? address : nil
  }

  isolated deinit {
    cairo_surface_destroy(surface)
    if let sharedPixels {
      if let fileDescriptor {
        grow_bs_memfd_unmap(sharedPixels, stride * height, fileDescriptor)
      } else {
        grow_bs_shm_unmap(sharedPixels)
      }
    }
  }

  static let background = (0.11, 0.17, 0.22)
  /// The background as the X server's pixel value (xRGB), for the windows' own background.
  static var backgroundPixel: UInt32 {
    UInt32(background.0 * 255) << 16 | UInt32(background.1 * 255) << 8 | UInt32(background.2 * 255)
  }

  /// Draws `content` over the whole frame.
  func draw(_ content: BreakScreenContent) {
    guard let cr = cairo_create(surface) else { return }
    defer { cairo_destroy(cr) }
    let h = Double(height)
    let w = Double(width)
    cairo_set_source_rgb(cr, Self.background.0, Self.background.1, Self.background.2)
    cairo_paint(cr)

    var y = h * 0.16
    y += text(cr, content.title, size: h * 0.04, bold: false, rgb: (0.62, 0.70, 0.78), top: y)
    let clockTop = Int(y)
    y += text(cr, content.timeLeft, size: h * 0.17, bold: true, rgb: (0.96, 0.97, 0.98), top: y)
    clockRows = max(clockTop, 0)..<min(Int(y.rounded(.up)) + 1, height)
    y += h * 0.03
    y += text(cr, content.headline, size: h * 0.037, bold: false, rgb: (0.85, 0.89, 0.93), top: y)
    y += h * 0.02
    y += text(
      cr, content.suggestion, size: h * 0.03, bold: false, rgb: (0.74, 0.80, 0.86), top: y,
      italic: true)

    // The buttons, side by side and centred.
    buttons = []
    guard !content.buttons.isEmpty else { return }
    let size = h * 0.03
    let padding = size * 1.2
    let gap = size * 1.5
    let labels = content.buttons.map { measure(cr, $0.label, size: size, bold: true) }
    let boxHeight = (labels.map(\.height).max() ?? size) + padding
    let widths = labels.map { $0.width + 2 * padding }
    var x = (w - widths.reduce(0, +) - gap * Double(widths.count - 1)) / 2
    let top = max(y + h * 0.06, h * 0.68)
    for (index, entry) in content.buttons.enumerated() {
      let rect = ScreenRect(
        x: Int(x), y: Int(top), width: Int(widths[index]), height: Int(boxHeight))
      buttons.append((entry.button, rect))
      cairo_rectangle(cr, Double(rect.x), Double(rect.y), Double(rect.width), Double(rect.height))
      cairo_set_source_rgb(cr, 0.20, 0.31, 0.41)
      cairo_fill_preserve(cr)
      if content.focused == entry.button {
        cairo_set_source_rgb(cr, 0.94, 0.71, 0.16)
        cairo_set_line_width(cr, max(3, size * 0.15))
      } else {
        cairo_set_source_rgb(cr, 0.38, 0.49, 0.59)
        cairo_set_line_width(cr, max(1, size * 0.05))
      }
      cairo_stroke(cr)
      _ = text(
        cr, entry.label, size: size, bold: true, rgb: (0.96, 0.97, 0.98),
        top: top + (boxHeight - labels[index].height) / 2, centre: x + widths[index] / 2)
      x += widths[index] + gap
    }
  }

  /// The bytes of `rows` (each `stride` long), for PutImage.
  func withRows<Result>(_ rows: Range<Int>, _ body: (UnsafeRawBufferPointer) -> Result) -> Result {
    cairo_surface_flush(surface)
    let base = UnsafeRawPointer(cairo_image_surface_get_data(surface))
    let start = base.map { $0 + rows.lowerBound * stride }
    return body(UnsafeRawBufferPointer(start: start, count: base == nil ? 0 : rows.count * stride))
  }

  /// Lays out `text` (pango: any script, the fonts' emoji) centred at `centre` (the middle of
  /// the frame by default) from `top`; returns its height.
  private func text(
    _ cr: OpaquePointer, _ text: String, size: Double, bold: Bool,
    rgb: (Double, Double, Double), top: Double, italic: Bool = false, centre: Double? = nil
  ) -> Double {
    let wrap = centre == nil
    guard let layout = layout(cr, text, size: size, bold: bold, italic: italic, wrap: wrap) else {
      return 0
    }
    defer { g_object_unref(UnsafeMutableRawPointer(layout)) }
    var width: Int32 = 0
    var height: Int32 = 0
    pango_layout_get_pixel_size(layout, &width, &height)
    cairo_set_source_rgb(cr, rgb.0, rgb.1, rgb.2)
    // A wrapped layout is the wrap width wide and centres its lines itself.
    let left = wrap ? Double(self.width) * 0.1 : (centre ?? 0) - Double(width) / 2
    cairo_move_to(cr, left, top)
    pango_cairo_show_layout(cr, layout)
    return Double(height)
  }

  private func measure(_ cr: OpaquePointer, _ text: String, size: Double, bold: Bool)
    -> (width: Double, height: Double)
  {
    guard let layout = layout(cr, text, size: size, bold: bold, italic: false, wrap: false) else {
      return (0, 0)
    }
    defer { g_object_unref(UnsafeMutableRawPointer(layout)) }
    var width: Int32 = 0
    var height: Int32 = 0
    pango_layout_get_pixel_size(layout, &width, &height)
    return (Double(width), Double(height))
  }

  private func layout(
    _ cr: OpaquePointer, _ text: String, size: Double, bold: Bool, italic: Bool, wrap: Bool
  ) -> OpaquePointer? {
    guard let layout = pango_cairo_create_layout(cr) else { return nil }
    let font = pango_font_description_from_string("Sans")
    pango_font_description_set_absolute_size(font, size * Double(PANGO_SCALE))
    if bold { pango_font_description_set_weight(font, PANGO_WEIGHT_BOLD) }
    if italic { pango_font_description_set_style(font, PANGO_STYLE_ITALIC) }
    pango_layout_set_font_description(layout, font)
    pango_font_description_free(font)
    if wrap {
      // Long lines (a suggestion) wrap at 80 % of the width, centred.
      pango_layout_set_width(layout, Int32(Double(width) * 0.8) * PANGO_SCALE)
      pango_layout_set_alignment(layout, PANGO_ALIGN_CENTER)
    }
    pango_layout_set_text(layout, text, -1)
    return layout
  }
}
