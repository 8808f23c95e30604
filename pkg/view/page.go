package view

import (
	"bytes"
	"fmt"
)

// pageScript refreshes the map in place every second from map.svg next to
// the page, so the page works behind a path prefix (kubectl proxy) and
// offline; it loads nothing else.
const pageScript = `(function(){
var map=document.getElementById("map"),state=document.getElementById("state");
var base=location.pathname.replace(/\/?$/,"/");
function tick(){
 fetch(base+"map.svg",{cache:"no-store"}).then(function(r){
  if(!r.ok)throw new Error("agent answered "+r.status);
  return r.text();
 }).then(function(svg){
  map.innerHTML=svg;
  state.textContent="live, refreshed "+new Date().toLocaleTimeString();
  state.className="live";
 }).catch(function(e){
  state.textContent="not refreshing: "+e.message;
  state.className="stale";
 }).finally(function(){setTimeout(tick,1000);});
}
setTimeout(tick,1000);
})();`

const pageStyle = `body{margin:0;font-family:"DejaVu Sans Mono",Menlo,Consolas,monospace;background:#fafafa;color:#222}
header{padding:8px 12px;border-bottom:1px solid #ddd;background:#fff}
header b{margin-right:12px}#state{font-size:12px}.live{color:#2e7d32}.stale{color:#c62828}
#map{padding:8px}#map svg{max-width:100%;height:auto}`

// Page is the /ui page: the map inline (so it shows without script too)
// and a small script that replaces it with a fresh one every second.
func Page(title string, svg []byte) []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n<title>%s</title>\n", esc(title))
	fmt.Fprintf(&b, "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n<style>%s</style></head>\n", pageStyle)
	fmt.Fprintf(&b, "<body><header><b>%s</b><span id=\"state\">loaded</span></header>\n<div id=\"map\">\n", esc(title))
	b.Write(svg)
	fmt.Fprintf(&b, "</div>\n<script>%s</script>\n</body></html>\n", pageScript)
	return b.Bytes()
}
