import assert from 'node:assert/strict';
import { fileTypeWords } from '../../../src/core/selection/fileTypes';

describe('file types in prompts', () => {
  it('names the media type of each file a prompt names, once each', () => {
    assert.equal(fileTypeWords('read the menu in gs://trip/menu_kyoto.JPG and translate it'), 'image photo');
    assert.equal(fileTypeWords('OCR scan_1.png and scan_2.png, then attach minutes.docx'), 'image photo document');
    assert.equal(fileTypeWords('summarise ~/contracts/nda.pdf'), 'document pdf');
    assert.equal(fileTypeWords('trim intro.mp4 and extract the audio to intro.mp3'), 'video audio');
  });

  it('adds nothing for plain text files, words that only look like files, or no file at all', () => {
    assert.equal(fileTypeWords('save the summary to ~/notes/week.md'), '');
    assert.equal(fileTypeWords('append the rows to leads.csv'), '');
    assert.equal(fileTypeWords('e.g. send it, i.e. now. Version 2.0 is out.'), '');
    assert.equal(fileTypeWords('what is the weather in Lyon'), '');
  });
});
