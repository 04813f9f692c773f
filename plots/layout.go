package plots

import (
	"fmt"
	"image"
	"image/color"
	"math"
	"strings"

	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// TextBox is where one string of a figure lands on its canvas.
type TextBox struct {
	Text string
	Box  vg.Rectangle
}

// CheckLayout draws the figure on a canvas that records its text and
// reports every string that leaves the canvas and every pair of strings
// that overlap, or nil when the figure is legible.
func (f *Figure) CheckLayout() error {
	boxes, size, err := f.TextBoxes()
	if err != nil {
		return err
	}
	// Glyph extents include the font's line gap: let boxes touch by a
	// hair without calling it an overlap.
	const slack = vg.Length(0.6)
	var problems []string
	for _, b := range boxes {
		if b.Box.Min.X < -slack || b.Box.Min.Y < -slack || b.Box.Max.X > size.X+slack || b.Box.Max.Y > size.Y+slack {
			problems = append(problems, fmt.Sprintf("%q leaves the %.0fx%.0f pt canvas: %s", b.Text, size.X.Points(), size.Y.Points(), rect(b.Box)))
		}
	}
	for i, a := range boxes {
		for _, b := range boxes[i+1:] {
			if a.Box.Min.X+slack < b.Box.Max.X && b.Box.Min.X+slack < a.Box.Max.X &&
				a.Box.Min.Y+slack < b.Box.Max.Y && b.Box.Min.Y+slack < a.Box.Max.Y {
				problems = append(problems, fmt.Sprintf("%q %s overlaps %q %s", a.Text, rect(a.Box), b.Text, rect(b.Box)))
			}
		}
	}
	if len(problems) > 0 {
		return fmt.Errorf("figure %q: %s", f.Title, strings.Join(problems, "; "))
	}
	return nil
}

func rect(r vg.Rectangle) string {
	return fmt.Sprintf("[%.1f,%.1f]-[%.1f,%.1f]", r.Min.X.Points(), r.Min.Y.Points(), r.Max.X.Points(), r.Max.Y.Points())
}

// TextBoxes lays the figure out as Save does and returns the box of every
// string drawn, in canvas coordinates, with the canvas size.
func (f *Figure) TextBoxes() ([]TextBox, vg.Point, error) {
	lay, err := f.layout()
	if err != nil {
		return nil, vg.Point{}, err
	}
	rc := &recorder{m: identity}
	f.draw(draw.Canvas{Canvas: rc, Rectangle: vg.Rectangle{Max: vg.Point{X: lay.w, Y: lay.h}}}, lay)
	return rc.boxes, vg.Point{X: lay.w, Y: lay.h}, nil
}

// affine maps (x, y) to (a x + c y + e, b x + d y + f).
type affine struct{ a, b, c, d, e, f float64 }

var identity = affine{a: 1, d: 1}

func (m affine) then(n affine) affine {
	return affine{
		a: m.a*n.a + m.c*n.b, b: m.b*n.a + m.d*n.b,
		c: m.a*n.c + m.c*n.d, d: m.b*n.c + m.d*n.d,
		e: m.a*n.e + m.c*n.f + m.e, f: m.b*n.e + m.d*n.f + m.f,
	}
}

func (m affine) apply(x, y vg.Length) vg.Point {
	fx, fy := float64(x), float64(y)
	return vg.Point{X: vg.Length(m.a*fx + m.c*fy + m.e), Y: vg.Length(m.b*fx + m.d*fy + m.f)}
}

// recorder is a vg.Canvas that draws nothing and keeps the box of each
// string, following the canvas transforms (rotated axis labels included).
type recorder struct {
	m     affine
	stack []affine
	boxes []TextBox
}

func (r *recorder) SetLineWidth(vg.Length)              {}
func (r *recorder) SetLineDash([]vg.Length, vg.Length)  {}
func (r *recorder) SetColor(color.Color)                {}
func (r *recorder) Stroke(vg.Path)                      {}
func (r *recorder) Fill(vg.Path)                        {}
func (r *recorder) DrawImage(vg.Rectangle, image.Image) {}
func (r *recorder) Push()                               { r.stack = append(r.stack, r.m) }
func (r *recorder) Pop() {
	r.m = r.stack[len(r.stack)-1]
	r.stack = r.stack[:len(r.stack)-1]
}
func (r *recorder) Rotate(rad float64) {
	s, c := math.Sincos(rad)
	r.m = r.m.then(affine{a: c, b: s, c: -s, d: c})
}
func (r *recorder) Translate(pt vg.Point) {
	r.m = r.m.then(affine{a: 1, d: 1, e: float64(pt.X), f: float64(pt.Y)})
}
func (r *recorder) Scale(x, y float64) { r.m = r.m.then(affine{a: x, d: y}) }

// inkAscent is how far above the baseline the tallest letters, digits and
// brackets reach, as a share of the font size (0.73 in Liberation Sans):
// a font's ascent also holds room for accents, which would make the lines
// of one wrapped label overlap each other.
const inkAscent = 0.76

// FillString records the box from the baseline's start: the advance width
// across, the descent below and the letters' height above.
func (r *recorder) FillString(fnt font.Face, pt vg.Point, text string) {
	if strings.TrimSpace(text) == "" {
		return
	}
	desc, asc := fnt.Extents().Descent, fnt.Font.Size*inkAscent
	w := fnt.Width(text)
	corners := []vg.Point{
		r.m.apply(pt.X, pt.Y-desc), r.m.apply(pt.X+w, pt.Y-desc),
		r.m.apply(pt.X, pt.Y+asc), r.m.apply(pt.X+w, pt.Y+asc),
	}
	box := vg.Rectangle{Min: corners[0], Max: corners[0]}
	for _, c := range corners[1:] {
		box.Min.X, box.Min.Y = min(box.Min.X, c.X), min(box.Min.Y, c.Y)
		box.Max.X, box.Max.Y = max(box.Max.X, c.X), max(box.Max.Y, c.Y)
	}
	r.boxes = append(r.boxes, TextBox{Text: text, Box: box})
}
